package hf

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/tpucc/tpucc/models/internal/jsonstrict"
	"github.com/tpucc/tpucc/models/safetensors"
)

// GenerationFile is the name of a model directory's generation defaults.
const GenerationFile = "generation_config.json"

// Generation is what tpucc takes from generation_config.json: the tokens
// that end a sequence and the token that fills a finished row. Its sampling
// defaults (do_sample, temperature, top_k, top_p) are not read: tpucc
// samples only as its caller asks.
type Generation struct {
	EOS []int // a row that emits one of these is finished; empty: none
	// Pad fills a finished row's later places. As in transformers'
	// generate, it is pad_token_id, or the first EOS id without one.
	Pad int
}

// LoadGeneration reads dir/generation_config.json's eos_token_id and
// pad_token_id (an int, a list of ints, or null), each falling back to
// config.json's field of the same name when generation_config.json lacks
// it or does not exist, as transformers does.
func LoadGeneration(dir string) (*Generation, error) {
	var gen, cfg genFields
	if err := readGenFields(filepath.Join(dir, GenerationFile), &gen, true); err != nil {
		return nil, err
	}
	if err := readGenFields(filepath.Join(dir, ConfigFile), &cfg, false); err != nil {
		return nil, err
	}
	g := &Generation{}
	var err error
	eos, eosFrom := gen.EOS, GenerationFile
	if eos == nil {
		eos, eosFrom = cfg.EOS, ConfigFile
	}
	if g.EOS, err = tokenIDs(eos); err != nil {
		return nil, fmt.Errorf("%s: field \"eos_token_id\": %v", filepath.Join(dir, eosFrom), err)
	}
	pad, padFrom := gen.Pad, GenerationFile
	if pad == nil {
		pad, padFrom = cfg.Pad, ConfigFile
	}
	pads, err := tokenIDs(pad)
	if err == nil && len(pads) > 1 {
		err = fmt.Errorf("%s is a list; a row is padded with one token", pad)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: field \"pad_token_id\": %v", filepath.Join(dir, padFrom), err)
	}
	switch {
	case len(pads) == 1:
		g.Pad = pads[0]
	case len(g.EOS) > 0:
		g.Pad = g.EOS[0]
	}
	return g, nil
}

// genFields are the two raw fields; nil when absent or null.
type genFields struct {
	EOS json.RawMessage `json:"eos_token_id"`
	Pad json.RawMessage `json:"pad_token_id"`
}

func readGenFields(path string, f *genFields, optional bool) error {
	data, err := safetensors.ReadBounded(path, maxConfig)
	if optional && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := jsonstrict.Check(data); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := json.Unmarshal(data, f); err != nil {
		return fmt.Errorf("%s: not a JSON object of fields", path)
	}
	for _, r := range []*json.RawMessage{&f.EOS, &f.Pad} {
		if string(*r) == "null" {
			*r = nil
		}
	}
	return nil
}

// tokenIDs reads an int or a list of ints, each a non-negative token id.
func tokenIDs(raw json.RawMessage) ([]int, error) {
	if raw == nil {
		return nil, nil
	}
	var one int
	if err := json.Unmarshal(raw, &one); err == nil {
		if one < 0 {
			return nil, fmt.Errorf("%d is not a token id", one)
		}
		return []int{one}, nil
	}
	var list []int
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("%s is not a token id or a list of them", raw)
	}
	for _, v := range list {
		if v < 0 {
			return nil, fmt.Errorf("%d is not a token id", v)
		}
	}
	return list, nil
}
