"""The load benchmark before and after the answer page's other actions, on a fresh stack per profile.

    .venv/bin/python benchmarks/load_profiles.py --profiles embedded,production --users 20 --timeout 1500

For each profile: a fresh var folder (and, for production, a fresh PostgreSQL database, a Redis database of its own,
osmem-server for the OpenSearch API and qdrant-client's local mode, as the e2e tests run it, with every transport
setting on), the BioASQ benchmark corpus ingested and embedded before the load, `manage.py stack start`, then
`benchmarks/load.py --actions ask` (the benchmark before the other actions) and, on the same stack once the first
run has ended, `benchmarks/load.py` with all four actions. The production runs add `--tls-proxy`. Each run writes
`load-<profile>-ask.json` / `load-<profile>-all.json` (and the printed table as `.txt`) under `--out-dir`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.e2e.profiles import PROFILES, profile_env  # noqa: E402
from tests.support import free_port, shared_data_dir  # noqa: E402

RUNS = {"ask": "ask", "all": "ask,follow-up,recheck,deep-check"}
# tests/e2e/profiles.py turns these off for a browser talking plain http; the load generator acts as the TLS proxy.
TRANSPORT_OFF = (
    "DJANGO_BEHIND_TLS_PROXY", "DJANGO_SECURE_SSL_REDIRECT", "DJANGO_SESSION_COOKIE_SECURE",
    "DJANGO_CSRF_COOKIE_SECURE", "DJANGO_SECURE_HSTS_SECONDS",
)  # fmt: skip


def manage(env: Mapping[str, str], *args: str) -> None:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, text=True, capture_output=True)
    print(f"manage.py {args[0]}: exit {done.returncode} in {time.perf_counter() - started:.0f} s", flush=True)
    if done.returncode:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")


def run_profile(profile: str, args: argparse.Namespace) -> None:
    var_dir = args.out_dir / f"var-{profile}"
    var_dir.mkdir(parents=True, exist_ok=True)
    corpus = shared_data_dir() / "bioasq" / "benchmark" / "corpus.jsonl.gz"
    with profile_env(profile, var_dir) as profile_vars:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "webapp.settings",
            "VERIMED_VAR_DIR": str(var_dir),
            "VERIMED_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
            "VERIMED_LLM_MAX_TOKENS": str(args.answer_tokens),
            **{key: value for key, value in profile_vars.items() if key not in TRANSPORT_OFF},
        }
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput")
        manage(env, "ingest", "--no-progress", str(corpus))  # embedded here, so the load meets no embedding
        port = free_port()
        manage(env, "stack", "start", "--port", str(port))
        try:
            for name, actions in RUNS.items():
                command = [
                    sys.executable, "benchmarks/load.py", "--url", f"http://127.0.0.1:{port}",
                    "--users", str(args.users), "--timeout", str(args.timeout), "--actions", actions,
                    "--llm-url", env["VERIMED_LLM_BASE_URL"],
                    "--out", str(args.out_dir / f"load-{profile}-{name}.json"),
                    *(["--tls-proxy"] if profile == "production" else []),
                ]  # fmt: skip
                started = time.perf_counter()
                with (args.out_dir / f"load-{profile}-{name}.txt").open("w") as table:
                    done = subprocess.run(command, cwd=ROOT, env=env, stdout=table, stderr=subprocess.STDOUT)
                print(f"{profile} {name}: exit {done.returncode} in {time.perf_counter() - started:.0f} s", flush=True)
                time.sleep(30)  # what the bound left running settles before the next run's idle yardstick
        finally:
            subprocess.run([sys.executable, "manage.py", "stack", "stop"], cwd=ROOT, env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profiles", default=",".join(PROFILES), help=f"comma-separated, from {','.join(PROFILES)}")
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=1500, help="each run's bound, seconds (load.py --timeout)")
    parser.add_argument("--answer-tokens", type=int, default=160, help="VERIMED_LLM_MAX_TOKENS for the stacks")
    parser.add_argument("--out-dir", type=Path, default=ROOT / "var" / "benchmarks" / "load-profiles")
    args = parser.parse_args()
    profiles = [name.strip() for name in args.profiles.split(",") if name.strip()]
    unknown = set(profiles) - set(PROFILES)
    if unknown:
        parser.error(f"unknown profiles: {', '.join(sorted(unknown))}")
    for profile in profiles:
        run_profile(profile, args)


if __name__ == "__main__":
    main()
