"""What transformers and torch.optim compute for `tpucc train`.

Usage:
  train_oracle.py train --model DIR --tokens T.npy --steps N --batch B
                        --optimizer sgd|adamw --lr LR [--weight-decay WD]
                        [--betas B1,B2] [--eps E] [--momentum M]
                        [--clip-norm C] [--labels L.npy] --output-dir OUT
                        [-- <the flags of another run> ...]
  train_oracle.py logits DIR T.npy OUT.npy [DIR T.npy OUT.npy ...]

train is `tpucc train`'s contract run by torch: the model loaded in float32
with AutoModelForCausalLM, step i on rows i*B ... i*B+B-1 of T.npy (modulo
its rows), the loss transformers' causal-LM loss (labels = input_ids, or the
rows of L.npy), torch.optim.SGD or AdamW (defaults as `tpucc train`'s: the
weight decay 0 for SGD, 0.01 for AdamW), clip_grad_norm_ before each update
when --clip-norm is given. It writes OUT/losses.npy (f32 [N], each step's
loss before its update) and the trained model with save_pretrained
(float32, safetensors). Runs separated by -- share one process (torch
takes seconds to import).

logits loads DIR with AutoModelForCausalLM (float32) and writes the logits of
every row of T.npy, f32 [rows, L, V], to OUT.npy.
"""

import argparse
import os
import sys

import numpy as np
import torch
from transformers import AutoModelForCausalLM


def load(path):
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    return model


def train(argv):
    p = argparse.ArgumentParser(prog="train_oracle.py train")
    p.add_argument("--model", required=True)
    p.add_argument("--tokens", required=True)
    p.add_argument("--labels")
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--optimizer", choices=["sgd", "adamw"], required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--weight-decay", type=float)
    p.add_argument("--betas", default="0.9,0.999")
    p.add_argument("--eps", type=float, default=1e-8)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--clip-norm", type=float, default=0.0)
    p.add_argument("--output-dir", required=True)
    a = p.parse_args(argv)

    torch.manual_seed(0)
    model = load(a.model)
    model.train()
    tokens = torch.from_numpy(np.load(a.tokens).astype(np.int64))
    labels = torch.from_numpy(np.load(a.labels).astype(np.int64)) if a.labels else tokens
    params = list(model.parameters())
    if a.optimizer == "sgd":
        wd = 0.0 if a.weight_decay is None else a.weight_decay
        opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum, weight_decay=wd)
    else:
        wd = 0.01 if a.weight_decay is None else a.weight_decay
        b1, b2 = (float(x) for x in a.betas.split(","))
        opt = torch.optim.AdamW(params, lr=a.lr, betas=(b1, b2), eps=a.eps, weight_decay=wd)
    rows = tokens.shape[0]
    losses = []
    for i in range(a.steps):
        idx = [(i * a.batch + j) % rows for j in range(a.batch)]
        opt.zero_grad()
        loss = model(input_ids=tokens[idx], labels=labels[idx]).loss
        loss.backward()
        if a.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip_norm)
        opt.step()
        losses.append(float(loss.detach()))
    os.makedirs(a.output_dir, exist_ok=True)
    np.save(os.path.join(a.output_dir, "losses.npy"), np.array(losses, dtype=np.float32))
    model.save_pretrained(a.output_dir)


def logits(argv):
    for i in range(0, len(argv), 3):
        path, tokens, out = argv[i:i + 3]
        model = load(path).eval()
        with torch.no_grad():
            ids = torch.from_numpy(np.load(tokens).astype(np.int64))
            np.save(out, model(input_ids=ids).logits.float().numpy())


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("train", "logits"):
        sys.exit(__doc__)
    if sys.argv[1] == "logits":
        logits(sys.argv[2:])
        return
    run = []
    for a in sys.argv[2:] + ["--"]:
        if a != "--":
            run.append(a)
            continue
        train(run)
        run = []


if __name__ == "__main__":
    main()
