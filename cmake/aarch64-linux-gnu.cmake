# Cross-compiling for linux/arm64 on Debian with the cross toolchain (g++-aarch64-linux-gnu) and multiarch :arm64
# development packages (dpkg --add-architecture arm64); used by scripts/release.sh.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# No CMAKE_FIND_ROOT_PATH: with CMAKE_LIBRARY_ARCHITECTURE set, find_library and find_package search
# /usr/lib/aarch64-linux-gnu (and its cmake/ folder) before /usr/lib, and never the amd64 folder; headers are shared.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
