"""tessera's interposition layer for PyTorch jobs: transparent preemption at the framework
boundary (the barrier, state capture, exact resume). See layer.py and docs/cluster.md."""
