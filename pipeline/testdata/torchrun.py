"""torchrun (torch.distributed.run) as Debian's python3-torch 1.13.1 ships it, made runnable.

Under Python 3.11, torch 1.13's Std.from_str("0") returns None (enum iteration skips the
zero-valued flag), and torchrun's agent then fails in to_map with "'NoneType' object has no
attribute 'get'" before starting any worker. This wrapper maps that None to Std.NONE (what "0"
means) and runs torchrun unchanged otherwise; the pipeline tests use it to start workers the
way torchrun does (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, agent store).
"""
import sys

from torch.distributed.elastic.multiprocessing import api

_from_str = api.Std.from_str.__func__


def _fixed_from_str(cls, vm):
    value = _from_str(cls, vm)
    return api.Std.NONE if value is None else value


api.Std.from_str = classmethod(_fixed_from_str)

from torch.distributed.run import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
