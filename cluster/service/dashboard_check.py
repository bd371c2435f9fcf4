#!/usr/bin/env python3
"""Drives headless Chromium through the cluster scheduler's dashboard (dashboard.h) against a
running scheduler with jobs, and fails (exit 1) on the first thing that is not as it should be.

    dashboard_check.py --url http://127.0.0.1:PORT --token TOKEN --expect-jobs j1,j2 \
        --new-job-file FILE --screenshot out.png

Steps:
  1. Without a token the page says it cannot read the scheduler (401), and shows no job.
  2. With the token: the tier table lists premium, standard and basic with their targets; the
     tenant table lists the tenants; the node table shows every node with its slots; the job
     table lists every expected job with its tier and state; the events table is not empty.
  3. The page refreshes itself: it keeps updating without a reload, and a job submitted after
     the page was opened (its id is written to --new-job-file by the caller, which this script
     waits for) appears on it without a reload.
  4. A job name is text, not markup (the tenant "<b>evil</b>" shows as characters).
  5. A screenshot of the page.
The Chrome DevTools client is scripts/testing/cdp.py (standard library only).
"""

import argparse
import os
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "scripts", "testing"))
import browser_checks  # noqa: E402
from browser_checks import CheckFailed, check, wait_for  # noqa: E402


def column(page, table, index):
    return page.evaluate(
        f"[...document.querySelectorAll('#{table} tbody tr')].map(r => r.cells[{index}].innerText)")


def run(args):
    with browser_checks.chromium("cluster-dashboard-chromium-", args.chromium) as browser:
        page = browser.page()
        page.set_viewport(1300, 1000)

        # 1. No token.
        page.navigate(args.url + "/")
        check(page.evaluate("document.title") == "Tessera cluster", "the page loads")
        status = wait_for(page, "document.querySelector('#status.error') && "
                          "document.querySelector('#status').innerText", "an error status")
        check("cannot read the scheduler" in status, f"without a token: {status!r}")
        check(page.evaluate("document.querySelectorAll('#jobs tbody tr').length") == 0,
              "without a token no job is shown")

        # 2. With the token.
        page.navigate(f"{args.url}/?token={args.token}")
        wait_for(page, "Number(document.body.dataset.updates || 0) >= 1", "the first update")
        tiers = column(page, "tiers", 0)
        check(tiers == ["premium", "standard", "basic"], f"tier rows: {tiers}")
        targets = column(page, "tiers", 1)
        check(targets == ["95.0 %", "70.0 %", "best effort"], f"tier targets: {targets}")
        jobs = column(page, "jobs", 0)
        for job in args.expect_jobs.split(","):
            check(job in jobs, f"job {job} is listed")
        states = column(page, "jobs", 3)
        check("running" in states, f"some job runs: {states}")
        nodes = column(page, "nodes", 0)
        check(len(nodes) >= 1, f"nodes listed: {nodes}")
        tenants = column(page, "tenants", 0)
        check(len(tenants) >= 2, f"tenants listed: {tenants}")
        check(page.evaluate("document.querySelectorAll('#events tbody tr').length") > 0,
              "recent events are shown")

        # 3. Self-refreshing.
        before = int(page.evaluate("document.body.dataset.updates"))
        wait_for(page, f"Number(document.body.dataset.updates) >= {before + 2}",
                 "two more updates without a reload")
        check(True, "the page refreshes itself")
        deadline = time.monotonic() + 60
        while not os.path.exists(args.new_job_file) or not open(args.new_job_file).read():
            if time.monotonic() > deadline:
                raise CheckFailed("the caller did not submit the new job")
            time.sleep(0.2)
        new_job = open(args.new_job_file).read().strip()
        wait_for(page, f"[...document.querySelectorAll('#jobs tbody tr')]"
                 f".some(r => r.cells[0].innerText === '{new_job}')",
                 f"job {new_job} to appear without a reload")
        check(True, f"job {new_job}, submitted after the page opened, appeared")

        # 4. Text, not markup.
        tenants = column(page, "tenants", 0)
        check("<b>evil</b>" in tenants, f"a tenant name shows as text: {tenants}")
        check(page.evaluate("document.querySelectorAll('#tenants b').length") == 0,
              "no element was made from a tenant name")

        # 5. Screenshot.
        time.sleep(1.5)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(args.screenshot)
        check(os.path.getsize(args.screenshot) > 10000, f"screenshot {args.screenshot}")

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--expect-jobs", required=True)
    parser.add_argument("--new-job-file", required=True)
    parser.add_argument("--screenshot", required=True)
    parser.add_argument("--chromium", default="chromium")
    args = parser.parse_args()
    return browser_checks.main(run, args, "PASS: cluster dashboard in headless Chromium")


if __name__ == "__main__":
    sys.exit(main())
