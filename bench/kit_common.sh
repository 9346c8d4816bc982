# What the device kits share (sourced by bench/tasks/make_device_kit.sh and
# bench/micro/make_lending_kit.sh): a kit is a folder of programs that run on a machine with no
# packages, each through glibc's loader and the libraries copied beside it.
#
#   kit_start SCRIPT_NAME KIT_DIR   sets $kit (absolute); replaces only an earlier kit
#   kit_copy_libs FILE              every library FILE loads, and the loader, into $kit/lib
#   kit_wrap REAL AT [LIBDIR...]    REAL into $kit/real, a wrapper at $kit/AT that runs it
#   kit_strip DIR...                drops debug information (the device takes 64 MiB in all)

kit_start() {
  local script=$1
  kit=$2
  case "$kit" in /*) ;; *) kit="$PWD/$kit" ;; esac
  # Replaces only an earlier kit (its marker file) or an empty folder, never anything else.
  if [ -e "$kit" ] && [ ! -f "$kit/.aloe-kit" ] && [ -n "$(ls -A "$kit" 2>/dev/null)" ]; then
    echo "$script: $kit exists and is not a kit made here: give a new folder" >&2
    exit 2
  fi
  rm -rf "$kit"
  mkdir -p "$kit/real" "$kit/lib" "$kit/hwloc-plugins"
  touch "$kit/.aloe-kit"
}

kit_copy_libs() {
  ldd "$1" 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}' | while read -r lib; do
    [ -f "$lib" ] && cp -Ln "$lib" "$kit/lib/" 2>/dev/null || true
  done
}

# The wrapper looks for libraries in LD_LIBRARY_PATH first (a driver's libomp shim), then in
# the kit's lib/ and the LIBDIRs (relative to the kit). Libraries to preload come in
# ALOE_KIT_PRELOAD and go to the loader: LD_PRELOAD would also reach the shells and the
# system's tools in between, whose own loader cannot find the kit's libraries.
kit_wrap() {
  local real=$1 at=$2 name up dirs='$here/lib' d
  shift 2
  for d in "$@"; do dirs="$dirs:\$here/$d"; done  # the text "$here/...", for the wrapper
  name=$(basename "$real")
  cp -L "$real" "$kit/real/$name"
  kit_copy_libs "$real"
  mkdir -p "$kit/$(dirname "$at")"
  up=$(dirname "$at" | sed 's|[^/][^/]*|..|g')
  cat > "$kit/$at" <<WRAP
#!/usr/bin/env bash
here=\$(cd "\$(dirname "\$0")/$up" && pwd)
export ALOE_APPS_SELF="\$here/$at"  # a workload's re-exec comes back through here
export HWLOC_PLUGINS_PATH="\$here/hwloc-plugins"  # none: the system's would load X11 and OpenCL
exec "\$here/lib/ld-linux-x86-64.so.2" \${ALOE_KIT_PRELOAD:+--preload "\$ALOE_KIT_PRELOAD"} --library-path "\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}$dirs" "\$here/real/$name" "\$@"
WRAP
  chmod +x "$kit/$at"
}

kit_strip() {
  find "$@" -type f ! -name 'ld-linux*' -exec strip --strip-debug {} + 2>/dev/null || true
}
