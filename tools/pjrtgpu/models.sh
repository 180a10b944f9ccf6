#!/usr/bin/env bash
# Generates from the tiny Hugging Face checkpoints of the transformers oracle
# (tools/hf/oracle.py writes them, with transformers' own greedy tokens, in
# oracle.json) on an NVIDIA GPU through the CUDA plugin, and compares the
# tokens with transformers'. Run on the GPU machine after build.sh, like
# run.sh; nothing in CI depends on it.
#
#   tools/pjrtgpu/models.sh HF_DIR [BIN [OUT]]   (HF_DIR holds qwen3/, qwen3_moe/, gemma4/, ...)
set -uo pipefail
HF=$1
BIN=${2:-build/pjrtgpu/bin}
OUT=${3:-build/pjrtgpu}
mkdir -p "$OUT" /tmp/pjrtgpu
gzip -dc "$BIN/tpucc.gz" >/tmp/pjrtgpu/tpucc && chmod +x /tmp/pjrtgpu/tpucc
PY=$(command -v python3)
SITE=$("$PY" -c 'import site; print(site.getsitepackages()[0])')
LD_LIBRARY_PATH=$(ls -d "$SITE"/nvidia/*/lib 2>/dev/null | tr '\n' ':')${LD_LIBRARY_PATH:-}
export LD_LIBRARY_PATH TF_CPP_MIN_LOG_LEVEL=1
for dir in "$HF"/*/; do
	[ -f "$dir/oracle.json" ] || continue
	name=$(basename "$dir")
	args=$("$PY" -c 'import json,sys; print(" ".join("--prompt-ids " + ",".join(map(str, p)) for p in json.load(open(sys.argv[1]))["prompts"]))' "$dir/oracle.json")
	for precision in highest default; do
		# shellcheck disable=SC2086
		timeout 120 /tmp/pjrtgpu/tpucc generate --model "$dir" $args --max-new-tokens 32 --ignore-eos \
			--device gpu --precision $precision >"$OUT/gen-$name-$precision.txt" 2>"$OUT/gen-$name-$precision.err"
		rc=$?
		verdict=$("$PY" - "$dir/oracle.json" "$OUT/gen-$name-$precision.txt" <<'PY'
import json, sys
want = json.load(open(sys.argv[1]))["greedy"]
lines = open(sys.argv[2]).read().splitlines()
got = [list(map(int, l.split())) for l in lines[:len(want)]]
same = sum(g == w for g, w in zip(got, want))
first = [next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), None) for g, w in zip(got, want)]
print(f"{same} of {len(want)} rows identical to transformers' 32 greedy tokens; first difference per row {first}; "
      + " ".join(l for l in lines if l.startswith(("prefill", "decode"))))
PY
)
		echo "$name --precision $precision: exit $rc; $verdict" | tee -a "$OUT/models.txt"
	done
done
