// Translation unit that owns the precompiled <torch/torch.h> shared by all torch code.
