package limits

import "testing"

// TestParse: the kernel's lines with and without the bf16 dot peak; a
// line that is not a figure, or a missing FMA peak or bandwidth, is an
// error.
func TestParse(t *testing.T) {
	for out, want := range map[string]Limits{
		"fma_peak_flops 4.9e+11\nbf16_dot_peak_flops 9.1e+11\nstream_bytes_per_s 3.6e+10\n": {FMAPeak: 4.9e11, BF16Peak: 9.1e11, Bandwidth: 3.6e10},
		"fma_peak_flops 4.9e+11\nstream_bytes_per_s 3.6e+10\n":                              {FMAPeak: 4.9e11, Bandwidth: 3.6e10},
	} {
		if got, err := parse([]byte(out)); err != nil || got != want {
			t.Errorf("%q: got %+v, %v; want %+v", out, got, err, want)
		}
	}
	for out, want := range map[string]string{
		"fma_peak_flops 4.9e+11\nbf16_dot_peak_flops 9.1e+11\n": `limits kernel printed "fma_peak_flops 4.9e+11\nbf16_dot_peak_flops 9.1e+11\n"`,
		"fma_peak_flops x\n": `limits kernel printed "fma_peak_flops x"`,
	} {
		if _, err := parse([]byte(out)); err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", out, err, want)
		}
	}
}
