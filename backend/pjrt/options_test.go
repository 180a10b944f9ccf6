package pjrt

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseOptions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []Option
	}{
		{"", nil},
		{"asynchronous=false", []Option{{"asynchronous", false}}},
		{"cpu_device_count=2, preallocate=true", []Option{{"cpu_device_count", int64(2)}, {"preallocate", true}}},
		{"memory_fraction=0.5,allocator=platform", []Option{{"memory_fraction", float32(0.5)}, {"allocator", "platform"}}},
		{`name="a,b=c",n="7"`, []Option{{"name", "a,b=c"}, {"n", "7"}}},
		{"ids=[1, -2,3],none=[]", []Option{{"ids", []int64{1, -2, 3}}, {"none", []int64{}}}},
		{"big=-9223372036854775808", []Option{{"big", int64(-9223372036854775808)}}},
	} {
		got, err := ParseOptions(tc.in)
		if err != nil {
			t.Errorf("ParseOptions(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseOptions(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestParseOptionsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"asynchronous": `option "asynchronous": want name=value`,
		"=1":           `option "=1": want name=value`,
		"a=1,,b=2":     `option "": want name=value`,
		"a=1,a=2":      "option a given twice",
		`s="abc`:       `option "s=\"abc": unbalanced quote or bracket`,
		"ids=[1,2":     `option "ids=[1,2": unbalanced quote or bracket`,
		"ids=[1,x]":    `option ids: value [1,x]: "x" is not an integer`,
		"ids=[1]2":     "option ids: value [1]2: want a list of integers such as [1,2]",
		`s="a""b"`:     `option s: value "a""b": a quote inside a quoted string`,
		`s=a"b`:        `option "s=a\"b": unbalanced quote or bracket`,
		`s=a""b`:       `option s: value a""b: quote or bracket in an unquoted string`,
		`s=a]`:         `option "s=a]": unbalanced quote or bracket`,
		`"a,b"=1`:      `option name "\"a,b\"": want letters, digits, '_', '.' or '-'`,
	} {
		_, err := ParseOptions(in)
		if err == nil || err.Error() != want {
			t.Errorf("ParseOptions(%q) = %v, want %q", in, err, want)
		}
	}
}

// pinnedCPU is the pinned XLA:CPU plugin, whose options the tests know.
func pinnedCPU(t *testing.T) *Plugin {
	t.Helper()
	if os.Getenv(EnvPlugin) != "" {
		t.Skip("options of the pinned XLA:CPU plugin; $TPUCC_PJRT_PLUGIN names another")
	}
	p, err := openCPU()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The XLA:CPU plugin takes cpu_device_count and asynchronous; a client
// created with them has that many devices and runs the add synchronously.
func TestClientOptions(t *testing.T) {
	p := pinnedCPU(t)
	before := p.Live()
	c, err := p.NewClient(Option{"cpu_device_count", 2}, Option{"asynchronous", false})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Devices()); n != 2 {
		t.Errorf("cpu_device_count=2: %d devices", n)
	}
	exe, x := addOnDevice(t, c)
	out, err := exe.Execute([]*Buffer{x, x})
	if err != nil {
		t.Fatal(err)
	}
	got, err := out[0].ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if want := f32s(2, 4, 6, 8); string(got) != string(want) {
		t.Errorf("x+x = % x, want % x", got, want)
	}
	out[0].Close()
	x.Close()
	exe.Close()
	c.Close()
	if after := p.Live(); after != before {
		t.Errorf("live handles %d before, %d after", before, after)
	}
}

// A name the plugin does not know, or a value of the wrong type, is the
// plugin's INVALID_ARGUMENT error naming the option, and no client.
func TestClientOptionsRefused(t *testing.T) {
	p := pinnedCPU(t)
	before := p.Live()
	for _, o := range []Option{{"no_such_option", int64(1)}, {"cpu_device_count", true}} {
		c, err := p.NewClient(o)
		var pe *Error
		if c != nil || !errors.As(err, &pe) || pe.Func != "PJRT_Client_Create" || pe.Code != 3 || !strings.Contains(pe.Message, o.Name) {
			t.Errorf("NewClient(%v) = %v, %v; want PJRT_Client_Create INVALID_ARGUMENT naming %s", o, c, err, o.Name)
		}
	}
	if _, err := p.NewClient(Option{"x", 1.5}); err == nil || err.Error() != "pjrt: option x: value of type float64 (want bool, int, int64, float32, string or []int64)" {
		t.Errorf("float64 option: %v", err)
	}
	if after := p.Live(); after != before {
		t.Errorf("live handles %d before, %d after", before, after)
	}
}

// A backend's options come from its environment variable; a malformed one
// is an error naming the variable.
func TestOpenerOptions(t *testing.T) {
	if os.Getenv(EnvPlugin) != "" {
		t.Skip("options of the pinned XLA:CPU plugin; $TPUCC_PJRT_PLUGIN names another")
	}
	t.Setenv(EnvOptions, "cpu_device_count=3")
	b, err := opener(BackendName, EnvOptions, openCPU)()
	if err != nil {
		t.Fatal(err)
	}
	c := b.(*Backend).Client()
	if n := len(c.Devices()); n != 3 {
		t.Errorf("%s=cpu_device_count=3: %d devices", EnvOptions, n)
	}
	c.Close()
	t.Setenv(EnvOptions, "cpu_device_count")
	_, err = opener(BackendName, EnvOptions, openCPU)()
	if want := `pjrt: $TPUCC_PJRT_OPTIONS: option "cpu_device_count": want name=value`; err == nil || err.Error() != want {
		t.Errorf("malformed %s: %v, want %q", EnvOptions, err, want)
	}
}

func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{"a=1", `s="x,y",l=[1,2]`, "f=0.5,b=true", "a=[", `a="`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := ParseOptions(s)
		if err != nil {
			return
		}
		for _, o := range opts {
			if o.Name == "" || strings.ContainsAny(o.Name, "=,\" []") {
				t.Fatalf("ParseOptions(%q): option name %q", s, o.Name)
			}
			_, unpin, err := namedValues([]Option{o})
			if err != nil {
				t.Fatalf("ParseOptions(%q) gave %v, which namedValues refuses: %v", s, o, err)
			}
			unpin()
		}
	})
}
