"""A language model in a duplicate tournament: the `llm:` agent pointed at a local
OpenAI-compatible server (llama.cpp's `llama-server`, vLLM, Ollama, LM Studio, ...).

    # a model served locally, e.g. Ollama (its OpenAI-compatible endpoint):
    python examples/llm_local_server.py --base-url http://localhost:11434/v1 --model llama3.1
    # no server at hand: --tiny starts a stand-in model on 127.0.0.1 (first legal action)
    python examples/llm_local_server.py --tiny

It prints how many requests the tournament will make (`planned_requests`, what
`spades tournament --dry-run` says), plays it (the `llm` extra: `pip install -e '.[llm]'`),
and prints the tables, the language-model agents' table included: re-asks, illegal
answers, fallbacks, tokens and seconds per decision. The run folder keeps every exchange
(llm_exchanges.jsonl) and the response cache (llm_cache.sqlite). A local server needs no
key (api_key_env= with no value); a hosted one reads its key from the variable
api_key_env names.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://localhost:11434/v1")
    parser.add_argument("--model", default="llama3.1")
    parser.add_argument("--deals", type=int, default=4)
    parser.add_argument("--tiny", action="store_true", help="a stand-in model, 1 deal")
    args = parser.parse_args()
    if importlib.util.find_spec("openai") is None:
        print("the llm agent needs the openai library: pip install -e '.[llm]'")
        return 0

    from experiments.bench.llm import standin_server
    from experiments.tournament.config import TournamentConfig
    from experiments.tournament.llm_ladder import dry_run_lines, planned_requests
    from experiments.tournament.runner import run_tournament

    with contextlib.ExitStack() as stack:
        base_url, model, deals = args.base_url, args.model, args.deals
        if args.tiny:
            base_url, model, deals = stack.enter_context(standin_server()), "standin", 1
        spec = f"model=llm:model={model},base_url={base_url},api_key_env=,timeout=120"
        config = TournamentConfig(agents=(spec, "heuristic"), deals=deals)
        for line in dry_run_lines(planned_requests(config), config.mode):
            print(line)
        out = Path(tempfile.gettempdir()) / f"llm-local-{os.getpid()}"
        result = run_tournament(out, config, workers=1)
        print(result)
        print(f"run folder: {out} (exchanges in llm_exchanges.jsonl)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
