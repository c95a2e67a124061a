#!/usr/bin/env bash
# The publish step of .github/workflows/release.yml (changesets/action runs it when no changeset is pending):
# the whole test first, as `pnpm release` does, then `changeset publish` with npm provenance.
set -euo pipefail
cd "$(dirname "$0")/../.."
# npm's provenance check wants each manifest's repository to be the repository that built it: this one.
for manifest in packages/*/package.json; do
  dir=$(dirname "$manifest")
  if [ "$(node -p "require('./$manifest').private === true")" = true ]; then continue; fi
  (cd "$dir" && npm pkg set repository.type=git "repository.url=git+$GITHUB_SERVER_URL/$GITHUB_REPOSITORY.git" "repository.directory=$dir")
done
bash .ci/run suite
NPM_CONFIG_PROVENANCE=true npx -y pnpm@10.34.8 exec changeset publish
