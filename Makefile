# medcse study kit. `make demo` and `make test` are the README's two commands.
PYTHON ?= python3
TORCH ?= torch==2.13.0
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := $(VENV)/.extras

.PHONY: setup tools demo reports test lint bench lab docs clean

setup: $(STAMP)

# torch is installed first and pinned: an unpinned torch would pull a multi-GB CUDA build. The setup is what make demo
# and make lab need (the kit and JupyterLab); the tools of make test, lint, docs and bench come with $(EXTRAS).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[lab]"
	touch $(STAMP)

demo: setup  ## study 1, reduced but complete: its notebook's defaults (about 8 minutes on 2 CPU cores, plus the install on first use)
	$(BIN)/python -m kit.batch params/simcse_augmentations/demo.yaml

reports: setup  ## the full CPU study and the explorer, then reports/index.html
	$(BIN)/python -m kit.batch params/simcse_augmentations/cpu.yaml params/explore_augmentations

# pytest, ruff and nlpaug (dev), MkDocs (docs), Ray (kit.batch --ray / --jobs N) and mteb (MTEB tasks and result
# files) are optional extras: make test, lint, docs and bench install them, make demo does not.
tools: $(EXTRAS)

$(EXTRAS): $(STAMP) pyproject.toml
	$(BIN)/pip install -q -e ".[dev,docs,cluster,mteb]"
	touch $(EXTRAS)

# pdfLaTeX and booktabs for the test that compiles the reports' LaTeX tables: Debian's packages, installed once
# when missing and apt-get can (as root; tried once per .venv); otherwise one line says so and that test is skipped.
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended
TEX_TRIED := $(VENV)/.tex-tried
$(TEX_TRIED): $(STAMP)
	@kpsewhich booktabs.sty >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -q --no-install-recommends $(TEX_PACKAGES) >/dev/null 2>&1 || \
	    { timeout 300 apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends $(TEX_PACKAGES) >/dev/null 2>&1; }; }; } || \
	  echo "make test: pdflatex with booktabs is missing (apt-get install $(TEX_PACKAGES)); the LaTeX compile test is skipped"
	@touch $(TEX_TRIED)

# One pytest worker per core (TEST_JOBS=0: no workers, one process); tests sharing the session's smoke runs stay on one worker.
TEST_JOBS ?= auto
test: tools $(TEX_TRIED)  ## the whole suite, papermill smoke runs of every notebook and the quick benchmarks
	$(BIN)/python -m pytest -n $(TEST_JOBS) --dist loadgroup --durations=40 --durations-min=20

lint: tools  ## ruff: the rules and formatting of pyproject.toml (also checked by make test)
	$(BIN)/ruff check . && $(BIN)/ruff format --check .

bench: tools  ## full benchmarks; tables appended to benchmarks/results/<machine>.md
	$(BIN)/python benchmarks/augment.py
	$(BIN)/python benchmarks/train_step.py
	$(BIN)/python benchmarks/encode.py
	$(BIN)/python benchmarks/memory.py
	$(BIN)/python benchmarks/bootstrap.py

docs: tools  ## the documentation site from docs/ into site/, offline; --strict fails on a broken link or page
	$(BIN)/python -m kit.docs render
	$(BIN)/mkdocs build --strict --quiet

# JupyterLab comes with the setup, so that make lab needs no network after make demo; a venv made before it was
# installed gets it here (pip needs the network that once; offline, one line says so).
lab: setup  ## JupyterLab for the notebooks and the augmentation explorer
	@$(BIN)/python -c "import jupyterlab" 2>/dev/null || $(BIN)/pip install -q -e ".[lab]" 2>/dev/null || \
	  { echo "make lab: JupyterLab is not installed and pip could not install it (no network?): run make lab once with the network"; exit 2; }
	$(BIN)/jupyter lab notebooks/ $$([ "$$(id -u)" = 0 ] && echo --allow-root)  # root: in a container, say

clean:
	rm -rf reports/*/ reports/index.html
