"""torch.optim's answer for train's oracle test (train/oracle_test.go).

Usage: optim_oracle.py DIR CONFIG.json
DIR holds w1 b1 w2 b2 x y as .npy (f32), the MLP of train/testdata/mlp.tir. CONFIG names the
optimizer ("sgd" or "adamw"), its hyperparameters, the steps and optionally clip_norm and a
warm-up/cosine schedule. Writes DIR/torch_losses.npy (each step's loss, before its update) and
DIR/torch_<name>.npy, the weights after the last step.
"""
import json
import sys

import numpy as np
import torch


def main():
    d, cfg = sys.argv[1], json.load(open(sys.argv[2]))
    torch.manual_seed(0)
    names = ["w1", "b1", "w2", "b2"]
    ps = [torch.tensor(np.load(f"{d}/{n}.npy"), requires_grad=True) for n in names]
    x = torch.tensor(np.load(f"{d}/x.npy"))
    y = torch.tensor(np.load(f"{d}/y.npy"))
    if cfg["optimizer"] == "sgd":
        opt = torch.optim.SGD(ps, lr=cfg["lr"], momentum=cfg.get("momentum", 0),
                              nesterov=cfg.get("nesterov", False),
                              weight_decay=cfg.get("weight_decay", 0))
    else:
        opt = torch.optim.AdamW(ps, lr=cfg["lr"], betas=tuple(cfg.get("betas", (0.9, 0.999))),
                                eps=cfg.get("eps", 1e-8),
                                weight_decay=cfg.get("weight_decay", 0.01))
    sched = None
    if cfg.get("total", 0) > 0:
        import math
        w, t = cfg["warmup"], cfg["total"]

        def f(s):
            if s < w:
                return s / max(1, w)
            p = (s - w) / max(1, t - w)
            return max(0.0, 0.5 * (1.0 + math.cos(math.pi * p)))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, f)
    losses = []
    for _ in range(cfg["steps"]):
        opt.zero_grad()
        h = torch.tanh(x @ ps[0] + ps[1])
        loss = ((h @ ps[2] + ps[3] - y) ** 2).mean()
        loss.backward()
        if cfg.get("clip_norm", 0) > 0:
            torch.nn.utils.clip_grad_norm_(ps, cfg["clip_norm"])
        opt.step()
        if sched is not None:
            sched.step()
        losses.append(loss.item())
    np.save(f"{d}/torch_losses.npy", np.array(losses, dtype=np.float32))
    for n, p in zip(names, ps):
        np.save(f"{d}/torch_{n}.npy", p.detach().numpy())


if __name__ == "__main__":
    main()
