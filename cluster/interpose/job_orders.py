"""What the agent does to a run, for the interposition tests that run jobs without it
(logical_ranks_py_test.py, netns_test.py): write the stop order once the job is far enough."""
import os
import re
import time


def order_after(run_dir, step, running, deadline):
    """Writes `<run_dir>/order` as the agent does (a rename into place) once rank 0's progress
    file there reports `step` (it is up to a second old). Returns False if `running()` turned
    false or time.monotonic() passed `deadline` first."""
    progress = os.path.join(run_dir, "progress")
    while time.monotonic() < deadline and running():
        try:
            with open(progress) as f:
                m = re.search(r"step=(\d+)", f.read())
        except FileNotFoundError:
            m = None
        if m and int(m.group(1)) >= step:
            with open(os.path.join(run_dir, "order.tmp"), "w") as f:
                f.write("stop\n")
            os.replace(os.path.join(run_dir, "order.tmp"), os.path.join(run_dir, "order"))
            return True
        time.sleep(0.02)
    return False
