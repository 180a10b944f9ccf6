package main

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/tpucc/tpucc/backend"
	"github.com/tpucc/tpucc/engine"
	"github.com/tpucc/tpucc/ir"
	"github.com/tpucc/tpucc/models"
	"github.com/tpucc/tpucc/train"
)

// layerModes are the ways -alternate trains the dense model's layers.
var layerModes = []struct {
	name string
	opt  models.TrainOptions
}{
	{"looped", models.TrainOptions{}},
	{"remat", models.TrainOptions{RematLayers: true}},
	{"unrolled", models.TrainOptions{UnrollLayers: true}},
}

// runAlternate trains the dense model (-layers, -vocab) three ways in this
// one process, the layers looped (the default), looped with the forward
// recomputed (-remat's) and unrolled (-unroll's), a step of each in turn for
// rounds rounds after a warm-up round, so that the host's load moves all
// three alike, and prints each step and each way's median.
func runAlternate(rounds int) {
	runtime.GOMAXPROCS(*threads)
	var m benchModel
	for _, b := range benchModels(*quick) {
		if b.name == "dense" {
			m = b
		}
	}
	c, err := parseConfig(m)
	check(err)
	var trainers []*models.Trainer
	for _, mode := range layerModes {
		model, err := randomModel(c)
		check(err)
		o := mode.opt
		o.Backend, o.Cache = *backendName, engine.NewCache("", engine.CacheOptions{})
		tr, err := models.NewTrainer(model, train.NewAdamW(lr), o)
		check(err)
		t0 := time.Now()
		check(tr.Prepare(batch, tokens))
		fmt.Printf("bench/train: %s: compiled in %.1f s\n", mode.name, time.Since(t0).Seconds())
		trainers = append(trainers, tr)
	}
	ids := backend.New(ir.Tensor(ir.I32, batch, tokens))
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range batch * tokens {
		ids.SetInt64(i, int64(rng.IntN(c.Vocab)))
	}
	times := make([][]float64, len(trainers))
	for r := range rounds + 1 {
		for i, tr := range trainers {
			t0 := time.Now()
			loss, err := tr.Step(ids, nil)
			check(err)
			s := time.Since(t0).Seconds()
			if r > 0 {
				times[i] = append(times[i], s)
			}
			fmt.Printf("bench/train: round %d: %-8s %.3f s, loss %.4f\n", r, layerModes[i].name, s, loss)
		}
	}
	for i, ts := range times {
		slices.Sort(ts)
		fmt.Printf("bench/train: %-8s median %.3f s of %d steps\n", layerModes[i].name, ts[len(ts)/2], len(ts))
	}
}
