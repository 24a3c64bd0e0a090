# Artifact names shared by the action's scripts (sourced by run.sh).

# The merged results of a shard matrix are named after its shard artifacts, with the shard
# replaced: aptitude-shards-claude-shard-1-3-Linux-X64 -> aptitude-shards-claude-merged-Linux-X64
# (a name without a shard gets "-merged" appended). Shard jobs find their `baseline: auto`
# under this name (one baseline for every shard, so they all balance and reuse alike); the
# job that merges (`merge:`) uploads under it.
merged_name() {
  local merged
  merged="$(printf '%s' "$1" | sed -E 's/-shard-[0-9]+-[0-9]+(-|$)/-merged\1/')"
  [ "$merged" = "$1" ] && merged="$1-merged"
  printf '%s' "$merged"
}
