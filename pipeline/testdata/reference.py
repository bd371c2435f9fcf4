#!/usr/bin/python3
"""Independent references for the pipeline trainer's equivalence tests, in PyTorch.

Nothing here uses the pipeline's code: the models are written again in PyTorch, the optimizer
is torch.optim, clipping is torch.nn.utils.clip_grad_norm_, and the learning rate follows the
Knee formula of the authors' knee_lr_schedule.py. Run with /usr/bin/python3 (Debian's
python3-torch 1.13.1, the same version as the C++ libtorch).

  reference.py export-mlp DIR     writes DIR/model.pt (torch.jit.script of an nn.Sequential
                                  whose four children are the units) and DIR/data.pt
                                  (torch.save'd (inputs, targets))
  reference.py train SPEC.json    trains the model SPEC describes on the same global batches as
                                  the pipeline and writes SPEC["out"]: {"losses": [...],
                                  "units": [[[floats of tensor 0], ...], ...]}

SPEC: {"model": "mlp" | "gpt" | "cnn", "script": model.pt (mlp), "init": a pipeline checkpoint
step directory holding unit-<u>.bin (gpt, cnn), "data": tokens .bin (gpt) or torch.save'd
tuple (cnn, mlp), "eval_samples", "global_batch", "steps", "optimizer": sgd|adam|adamw, "lr",
"momentum", "weight_decay", "clip_norm", "schedule": constant|knee, "width", "heads", "layers",
"vocab", "seq_len", "image", "classes", "out"}.
"""
import json
import math
import struct
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


def export_mlp(out_dir):
    torch.manual_seed(1234)
    model = nn.Sequential(
        nn.Sequential(nn.Linear(8, 32), nn.Tanh()),
        nn.Sequential(nn.Linear(32, 32), nn.Tanh()),
        nn.Sequential(nn.Linear(32, 32), nn.Tanh()),
        nn.Linear(32, 4),
    )
    torch.jit.script(model).save(f"{out_dir}/model.pt")
    inputs = torch.randn(320, 8)
    teacher = torch.randn(8, 4)
    targets = (inputs @ teacher).argmax(1)
    torch.save((inputs, targets), f"{out_dir}/data.pt")


def export_cnn_data(out_dir):
    torch.manual_seed(99)
    inputs = torch.randn(32, 1, 8, 8)
    teacher = torch.randn(64, 10)
    torch.save((inputs, (inputs.flatten(1) @ teacher).argmax(1)), f"{out_dir}/cnn.pt")


def read_unit(path):
    """Parameters of a pipeline unit checkpoint (pipeline/checkpoint.h's format)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"TSPLUNT1":
        raise ValueError(f"{path}: not a unit checkpoint")
    pos = 16
    (count,) = struct.unpack_from("<Q", data, pos)
    pos += 8
    tensors = []
    for _ in range(count):
        (ndim,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        shape = struct.unpack_from(f"<{ndim}q", data, pos)
        pos += 8 * ndim
        (n,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        values = struct.unpack_from(f"<{n}f", data, pos)
        pos += 4 * n
        tensors.append(torch.tensor(values, dtype=torch.float32).reshape(shape))
    return tensors


class Embedding(nn.Module):
    def __init__(self, vocab, seq, width):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(seq, width)

    def forward(self, x):
        return self.tokens(x) + self.positions(torch.arange(x.size(1))).unsqueeze(0)


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.ln2 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.fc1 = nn.Linear(width, 4 * width)
        self.fc2 = nn.Linear(4 * width, width)

    def forward(self, x):
        n, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).view(n, t, 3, self.heads, hd).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), -1e9)
        y = (torch.softmax(scores, -1) @ v).transpose(1, 2).reshape(n, t, d)
        h = x + self.proj(y)
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))


class LmHead(nn.Module):
    def __init__(self, width, vocab):
        super().__init__()
        self.ln = nn.LayerNorm(width)
        self.out = nn.Linear(width, vocab)

    def forward(self, x):
        return self.out(self.ln(x))


class ConvBlock(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.conv(x)), 2)


class ConvHead(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.fc = nn.Linear(features, classes)

    def forward(self, x):
        return self.fc(x.flatten(1))


def build(spec):
    if spec["model"] == "mlp":
        return torch.jit.load(spec["script"])
    if spec["model"] == "gpt":
        units = [Embedding(spec["vocab"], spec["seq_len"], spec["width"])]
        units += [Block(spec["width"], spec["heads"]) for _ in range(spec["layers"])]
        units.append(LmHead(spec["width"], spec["vocab"]))
    else:
        units = [ConvBlock(1 if i == 0 else spec["width"], spec["width"])
                 for i in range(spec["layers"])]
        side = spec["image"] >> spec["layers"]
        units.append(ConvHead(spec["width"] * side * side, spec["classes"]))
    model = nn.Sequential(*units)
    with torch.no_grad():
        for u, unit in enumerate(units):
            saved = read_unit(f"{spec['init']}/unit-{u}.bin")
            params = list(unit.parameters())
            assert len(saved) == len(params), f"unit {u}: {len(saved)} vs {len(params)}"
            for p, s in zip(params, saved):
                p.copy_(s)
    return model


def load_data(spec):
    if spec["data"].endswith(".bin"):
        with open(spec["data"], "rb") as f:
            raw = f.read()
        tokens = torch.tensor(struct.unpack(f"<{len(raw) // 2}H", raw), dtype=torch.long)
        seq = spec["seq_len"]
        n = (len(tokens) - 1) // seq
        windows = torch.stack([tokens[k * seq:k * seq + seq + 1] for k in range(n)])
        return windows[:, :-1], windows[:, 1:]
    inputs, targets = torch.load(spec["data"])
    return inputs.float(), targets


def learning_rate(spec, step):
    peak = spec["lr"]
    if spec["schedule"] == "constant":
        return peak
    total = spec["steps"]
    explore = int(math.floor(0.5 * total + 0.5))  # knee's default: explore half the budget
    k = step + 1
    if k <= explore:
        return peak
    return max(0.0, peak - peak * float(k - explore) / float(total - explore))


def train(spec):
    torch.set_num_threads(1)
    model = build(spec)
    model.train()
    inputs, targets = load_data(spec)
    n = inputs.size(0) - spec.get("eval_samples", 0)
    params = list(model.parameters())
    name = spec["optimizer"]
    if name == "sgd":
        opt = torch.optim.SGD(params, lr=spec["lr"], momentum=spec["momentum"])
    elif name == "adam":
        opt = torch.optim.Adam(params, lr=spec["lr"], weight_decay=spec["weight_decay"])
    else:
        opt = torch.optim.AdamW(params, lr=spec["lr"], weight_decay=spec["weight_decay"])
    batch = spec["global_batch"]
    losses = []
    for step in range(spec["steps"]):
        idx = (torch.arange(batch) + step * batch) % n
        out = model(inputs[idx])
        loss = F.cross_entropy(out.reshape(-1, out.size(-1)), targets[idx].reshape(-1))
        opt.zero_grad()
        loss.backward()
        if spec["clip_norm"] > 0:
            torch.nn.utils.clip_grad_norm_(params, spec["clip_norm"])
        for group in opt.param_groups:
            group["lr"] = learning_rate(spec, step)
        opt.step()
        losses.append(loss.item())
    units = [[p.detach().flatten().tolist() for p in unit.parameters()] for unit in model.children()]
    with open(spec["out"], "w") as f:
        json.dump({"losses": losses, "units": units}, f)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("export-mlp", "export-cnn-data", "train"):
        sys.exit(__doc__)
    if sys.argv[1] == "export-mlp":
        export_mlp(sys.argv[2])
    elif sys.argv[1] == "export-cnn-data":
        export_cnn_data(sys.argv[2])
    else:
        with open(sys.argv[2]) as f:
            train(json.load(f))
