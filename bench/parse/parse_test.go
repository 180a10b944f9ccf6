package parse

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tpucc/tpucc/frontend/tir"
)

// bigSize is the generated file's approximate size in bytes.
const bigSize = 200 << 10

func block(b *testing.B) []byte {
	src, err := os.ReadFile("../../examples/transformer_block.tir")
	if err != nil {
		b.Fatal(err)
	}
	return src
}

// generated repeats the transformer block, renaming its function each time
// (it has one function and no calls), until the text is at least bigSize.
func generated(b *testing.B) []byte {
	one := string(block(b))
	var sb strings.Builder
	for i := 0; sb.Len() < bigSize; i++ {
		sb.WriteString(strings.Replace(one, "@transformer_block(", fmt.Sprintf("@transformer_block_%d(", i), 1))
	}
	return []byte(sb.String())
}

func benchParse(b *testing.B, src []byte) {
	if _, err := tir.Parse("bench.tir", src); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tir.Parse("bench.tir", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseTransformerBlock(b *testing.B) { benchParse(b, block(b)) }

func BenchmarkParseGenerated200KB(b *testing.B) { benchParse(b, generated(b)) }
