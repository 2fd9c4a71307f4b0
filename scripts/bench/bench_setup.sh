# The set-up that the benchmark scripts running on the GPU machine share (run_h100.sh,
# deployed_models.sh). Sourced after the script defines fail(); sets what the comments say.

# device_libraries: CUDA's libraries (the toolkit) and cuDNN (PyTorch's wheels) on
# LD_LIBRARY_PATH, each once; Python's output unbuffered, so logs come back as they are written.
device_libraries() {
  local lib
  for lib in /usr/local/cuda/lib64 /opt/torch/.venv/lib/python3.*/site-packages/nvidia/cudnn/lib; do
    [ -d "$lib" ] && case ":${LD_LIBRARY_PATH:-}:" in *":$lib:"*) ;; *) export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;; esac
  done
  export PYTHONUNBUFFERED=1
}

# bench_work_folder: with $out and $tag given, makes $out absolute (creating it) and sets the
# run's work folder, $work = /tmp/bench_<tag> (refused if it exists: an earlier run's), its
# $name, and its $raw and $logs folders (not yet created).
bench_work_folder() {
  mkdir -p "$out" || fail "cannot create '$out'"
  out="$(cd "$out" && pwd)"
  name="bench_$tag"
  work="/tmp/$name"
  [ -e "$work" ] && fail "'$work' exists (an earlier run with --tag $tag?); pick another tag or remove it"
  raw="$work/raw"
  logs="$work/logs"
}
