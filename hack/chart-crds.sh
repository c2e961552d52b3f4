#!/usr/bin/env bash
# Copies the generated CRDs into the Helm chart, so the chart never carries a
# hand-edited CRD; `make verify` fails when the two drift.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dst="${root}/charts/runlore/crds"
mkdir -p "${dst}"
rm -f "${dst}"/*.yaml
for f in "${root}"/config/crd/bases/*.yaml; do
	cp "${f}" "${dst}/$(basename "${f}")"
done
