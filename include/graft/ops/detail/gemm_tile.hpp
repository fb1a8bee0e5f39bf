// graft/ops/detail/gemm_tile.hpp — the register tile of graft's GEMM: its sizes and blocking
// constants, the micro-kernel contract and the portable C++ micro-kernel every CPU runs (the x86
// ones are in ops/arch/x86/gemm_kernels.hpp). Internal: include graft/ops/gemm.hpp.
#pragma once

#include <cstdint>

namespace graft::ops::gemm {

inline constexpr int mr = 6;                    ///< rows of the register tile
inline constexpr int nr = 16;                   ///< columns of the register tile
inline constexpr std::int64_t kc_block = 320;   ///< depth of a packed panel
inline constexpr std::int64_t mc_block = 96;    ///< rows of a packed A block (multiple of mr)
inline constexpr std::int64_t nc_block = 3072;  ///< columns of a packed B block (multiple of nr)

/// A bias and activation over C's columns that the AVX-512 and AVX2 micro-kernels apply to a tile's
/// final sums in registers as they store them, y = act(y + bias[j]): what a row pass over C afterwards
/// (ops::bias_act_epilogue) does, the same bits, without reading C back. `act` holds the value of
/// ops::bias_activation: 0 none, 1 relu, 2 relu6, 3 leaky_relu (x > 0 ? x : alpha x).
/// `descend` instead: C holds a variable and each final sum g steps it, c = c - g * alpha (no bias,
/// no activation): ApplyGradientDescent of the product, its bits (ops::apply_gradient_descent_of_product).
struct tile_bias_act {
    const float* bias = nullptr;  ///< one per column of C (null with `descend`)
    int act = 0;
    float alpha = 0.f;
    std::int64_t columns = 0;  ///< the bias's length: used only by a product of as many columns
    bool descend = false;
};

/// The micro-kernel contract: C[0:m, 0:n] (= or +=) a_panel[kc x mr] * b_panel[kc x nr].
template <class T>
using kernel_fn = void (*)(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t rs, std::int64_t cs,
                           int m, int n, bool accumulate);

namespace detail {

template <class T>
inline void store_tile(const T* acc, T* c, std::int64_t rs, std::int64_t cs, int m, int n, bool accumulate) {
    for (int r = 0; r < m; ++r) {
        for (int j = 0; j < n; ++j) {
            T& dst = c[r * rs + j * cs];
            dst = (accumulate ? dst : T(0)) + acc[r * nr + j];
        }
    }
}

template <class T>
inline void kernel_portable(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t rs, std::int64_t cs,
                            int m, int n, bool accumulate) {
    alignas(64) T acc[mr * nr] = {};
    for (std::int64_t k = 0; k < kc; ++k) {
        const T* bk = b + k * nr;
        const T* ak = a + k * mr;
        for (int r = 0; r < mr; ++r) {
            const T ar = ak[r];
            for (int j = 0; j < nr; ++j) acc[r * nr + j] += ar * bk[j];
        }
    }
    store_tile(acc, c, rs, cs, m, n, accumulate);
}
}  // namespace detail

}  // namespace graft::ops::gemm
