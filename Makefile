# tpucc Makefile.

# ---------------------------------------------------------------------------
# xlacheck: the Python environment of the XLA oracle (tools/xlacheck).
#
#   make venv       .venv/ with the pinned jax/jaxlib/numpy (tools/xlacheck/requirements.txt)
#   make venv-tpu   .venv-tpu/ with the same pins plus libtpu, for TPU compile-only checks
#
# Each venv is rebuilt from scratch when its requirements file changes, and left
# alone otherwise (the stamp file records the last successful install).
# ---------------------------------------------------------------------------

VENV ?= .venv
PY := $(VENV)/bin/python
VENV_TPU ?= .venv-tpu
PY_TPU := $(VENV_TPU)/bin/python
XLACHECK_REQ := tools/xlacheck/requirements.txt
XLACHECK_REQ_TPU := tools/xlacheck/requirements-tpu.txt
PIP_FLAGS := --disable-pip-version-check --no-input --quiet

.PHONY: venv venv-tpu

venv: $(VENV)/.stamp

$(VENV)/.stamp: $(XLACHECK_REQ)
	rm -rf $(VENV)
	python3 -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -r $(XLACHECK_REQ)
	touch $@

venv-tpu: $(VENV_TPU)/.stamp

$(VENV_TPU)/.stamp: $(XLACHECK_REQ_TPU) $(XLACHECK_REQ)
	rm -rf $(VENV_TPU)
	python3 -m venv $(VENV_TPU)
	$(PY_TPU) -m pip install $(PIP_FLAGS) -r $(XLACHECK_REQ_TPU)
	touch $@

# --- end of xlacheck section -------------------------------------------------
