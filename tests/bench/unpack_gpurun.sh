# SPDX-License-Identifier: MIT
# What a device-tool call of the GPU bench scripts carries, unpacked: sourced by peer_h200.sh and vision_h200.sh from
# the checkout's root. unpack_gpurun WORK installs the Vulkan loader (.gl/*.deb) and the gguf wheel, unpacks
# .gpurun's binaries and libraries into WORK (keeping the system's own libraries first) and sets ember to ember-cli.

untar() { python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"; }

unpack_gpurun() {
  local work=$1
  for f in .gl/*.deb; do dpkg -x "$f" /; done
  ldconfig
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .gpurun/*.whl && export PYTHONPATH=/tmp/site
  untar .gpurun/bin.tar.xz "$work/bin"
  untar .gpurun/libs.tar.xz "$work"
  for l in "$work"/libs/*; do ldconfig -p | grep -q " $(basename "$l") " && rm -f "$l"; done
  export LD_LIBRARY_PATH=$work/libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  ember=$work/bin/ember-cli
}
