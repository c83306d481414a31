// SPDX-License-Identifier: MIT
// Which instruction sets this CPU runs. __builtin_cpu_supports reads cpuid and, for AVX-class features, checks
// that the operating system saves the YMM state (XGETBV).
#include <cstdlib>

#include "cpu/cpu_kernels.h"

namespace ember::cpu {

bool isa_supported(Isa isa) {
    switch (isa) {
        case Isa::scalar: return true;
        case Isa::avx2:
#if defined(__x86_64__) || defined(__i386__)
            __builtin_cpu_init();
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
#else
            return false;
#endif
    }
    return false;
}

bool avxvnni_wanted() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    const char* off = std::getenv("EMBER_CPU_NO_AVXVNNI");
    return __builtin_cpu_supports("avxvnni") && !(off && *off == '1');
#else
    return false;
#endif
}

Isa best_isa() { return isa_supported(Isa::avx2) ? Isa::avx2 : Isa::scalar; }

const char* isa_name(Isa isa) { return isa == Isa::avx2 ? "avx2" : "scalar"; }

}  // namespace ember::cpu
