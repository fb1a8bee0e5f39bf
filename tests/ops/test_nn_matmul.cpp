// MatMul, BatchMatMulV2 and the GEMM engine under them, against float64 loops.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "graft/ops/bias_add.hpp"
#include "graft/ops/matmul.hpp"
#include "graft/ops/transpose.hpp"
#include "ops/nn_testing.hpp"

using namespace graft;
using graft::test::check_close;
using graft::test::random_tensor;

namespace {

tensor ref_matmul(const tensor& a_in, const tensor& b_in, bool ta, bool tb) {
    const tensor a = cast(a_in, dtype::float64), b = cast(b_in, dtype::float64);
    const std::int64_t M = ta ? a.dim(1) : a.dim(0), K = ta ? a.dim(0) : a.dim(1), N = tb ? b.dim(0) : b.dim(1);
    tensor c(dtype::float64, {M, N});
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            double s = 0;
            for (std::int64_t k = 0; k < K; ++k) {
                const double av = ta ? a.data<double>()[k * M + i] : a.data<double>()[i * K + k];
                const double bv = tb ? b.data<double>()[j * K + k] : b.data<double>()[k * N + j];
                s += av * bv;
            }
            c.data<double>()[i * N + j] = s;
        }
    return c;
}

struct mm_case {
    std::int64_t M, K, N;
};

}  // namespace

TEST_CASE("nn MatMul: a small product and its transposes") {
    // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
    const tensor a = tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor b = tensor::from_vector<float>({3, 2}, {7, 8, 9, 10, 11, 12});
    CHECK(equal(ops::matmul(a, b), tensor::from_vector<float>({2, 2}, {58, 64, 139, 154})));
    const tensor at = tensor::from_vector<float>({3, 2}, {1, 4, 2, 5, 3, 6});
    const tensor bt = tensor::from_vector<float>({2, 3}, {7, 9, 11, 8, 10, 12});
    CHECK(equal(ops::matmul(at, b, {.transpose_a = true}), tensor::from_vector<float>({2, 2}, {58, 64, 139, 154})));
    CHECK(equal(ops::matmul(a, bt, {.transpose_b = true}), tensor::from_vector<float>({2, 2}, {58, 64, 139, 154})));
    CHECK(equal(ops::matmul(at, bt, {true, true}), tensor::from_vector<float>({2, 2}, {58, 64, 139, 154})));
    const tensor ai = tensor::from_vector<std::int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
    const tensor bi = tensor::from_vector<std::int32_t>({3, 2}, {7, 8, 9, 10, 11, 12});
    CHECK(equal(ops::matmul(ai, bi), tensor::from_vector<std::int32_t>({2, 2}, {58, 64, 139, 154})));
    // float16 / bfloat16 are multiplied in float32 (these sums are exact in both)
    for (dtype h : {dtype::float16, dtype::bfloat16}) {
        CHECK(equal(ops::matmul(cast(a, h), cast(b, h)), cast(tensor::from_vector<float>({2, 2}, {58, 64, 139, 154}), h)));
        CHECK(equal(ops::batch_matmul(cast(a, h).reshaped({1, 2, 3}), cast(b, h)),
                    cast(tensor::from_vector<float>({1, 2, 2}, {58, 64, 139, 154}), h)));
    }
    CHECK_THROWS_AS(ops::matmul(cast(a, dtype::float16), cast(b, dtype::bfloat16)), invalid_argument_error);
}

TEST_CASE("nn MatMul: float32/float64 against float64 loops over shapes, transposes and every kernel the CPU runs") {
    // the AVX-512 tiles are 12x16 and 12x32 (two 6-row panels of A, one or two 16-column panels of
    // B; a block's last tile 1, 2, 4, 6 or 8 rows): shapes around 12/24 rows and 16/32/48 columns, partial second panels, K past one panel
    // depth (320) and the transposed orientation (column-strided stores) are all here
    const std::vector<mm_case> cases = {{1, 1, 1},     {1, 7, 5},     {5, 7, 1},     {6, 16, 16},  {7, 3, 17},
                                        {13, 40, 9},   {1, 300, 70},  {70, 300, 1},  {97, 333, 45}, {130, 70, 33},
                                        {7, 5, 3100},  {12, 32, 32},  {13, 20, 33},  {24, 64, 48}, {25, 321, 47},
                                        {50, 17, 97},  {96, 40, 128}, {11, 9, 31},
                                        // a last tile computed as 1, 2, 4, 6, 8 or 12 rows
                                        {3, 40, 33},   {4, 130, 48},  {8, 70, 40},   {16, 35, 20}, {32, 128, 96},
                                        // one row (or column): gemv, in blocks of whole vectors, the last masked
                                        {1, 400, 120}, {1, 120, 84},  {1, 84, 10},   {1, 33, 257}, {1, 784, 512},
                                        {120, 400, 1}};
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        const bool portable = isa == ops::gemm::kernel_isa::portable;
        for (const auto& c : cases)
            for (bool ta : {false, true})
                for (bool tb : {false, true}) {
                    const tensor a = random_tensor(dtype::float32, ta ? shape{c.K, c.M} : shape{c.M, c.K}, 11);
                    const tensor b = random_tensor(dtype::float32, tb ? shape{c.N, c.K} : shape{c.K, c.N}, 12);
                    const tensor want = ref_matmul(a, b, ta, tb);
                    INFO("M=" << c.M << " K=" << c.K << " N=" << c.N << " ta=" << ta << " tb=" << tb
                              << " kernel=" << static_cast<int>(isa));
                    check_close(ops::matmul(a, b, {ta, tb}), want, 1e-4, 1e-4, "float32");
                    if (portable) {  // float64 always runs the portable kernel
                        check_close(ops::matmul(cast(a, dtype::float64), cast(b, dtype::float64), {ta, tb}), want,
                                    1e-12, 1e-12, "float64");
                    }
                }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
}

TEST_CASE("nn MatMul: thread counts give the same result") {
    const tensor a = random_tensor(dtype::float32, {61, 129}, 3), b = random_tensor(dtype::float32, {129, 77}, 4);
    set_num_threads(1);
    const tensor one = ops::matmul(a, b);
    set_num_threads(3);
    const tensor three = ops::matmul(a, b);
    set_num_threads(2);
    check_close(one, three, 1e-6, 1e-6, "1 vs 3 threads");
    check_close(one, ref_matmul(a, b, false, false), 1e-4, 1e-4, "vs reference");
    // one row: gemv splits the columns between threads, each column summed the same way
    const tensor x = random_tensor(dtype::float32, {1, 784}, 5), w = random_tensor(dtype::float32, {784, 512}, 6);
    set_num_threads(1);
    const tensor row_one = ops::matmul(x, w);
    set_num_threads(2);
    const tensor row_two = ops::matmul(x, w);
    CHECK(equal(row_one, row_two));
    check_close(row_one, ref_matmul(x, w, false, false), 1e-4, 1e-4, "gemv vs reference");
}

TEST_CASE("gemm: small products go to other threads only where those are workers spinning for the next call") {
    using ops::gemm::detail::product_threads;
    CHECK(product_threads(1.3e6, 2, 1) == 2);  // the MLP's logits between two layers
    CHECK(product_threads(1.3e6, 2, 0) == 1);  // a parked worker is not worth waking for it
    CHECK(product_threads(0.2e6, 2, 1) == 1);
    CHECK(product_threads(3.0e6, 2, 0) == 1);
    CHECK(product_threads(5.0e6, 2, 0) == 2);
    CHECK(product_threads(0.6e6, 3, 1) == 1);  // one of two other threads spinning: as if none
    CHECK(product_threads(0.6e6, 3, 2) == 2);
    CHECK(product_threads(1.0e9, 4, 0) == 4);
    // the split shares compute what one thread does: small products just after a parallel call,
    // with b packed beforehand (rows split) and not (rows or columns split)
    const std::vector<mm_case> cases = {{128, 512, 10}, {64, 120, 84}, {32, 512, 10}, {6, 128, 400}, {100, 84, 10}};
    for (const auto& c : cases) {
        INFO("M=" << c.M << " K=" << c.K << " N=" << c.N);
        const tensor a = random_tensor(dtype::float32, {c.M, c.K}, 31), b = random_tensor(dtype::float32, {c.K, c.N}, 32);
        const auto pb = ops::pack_matmul_b(b, false);
        REQUIRE(pb);
        set_num_threads(1);
        const tensor one = ops::matmul(a, b), one_pre = ops::matmul(a, b, {false, false, pb.get()});
        set_num_threads(2);
        for (int rep = 0; rep < 3; ++rep) {
            graft::run_tasks(2, [](int) {});  // a worker now spins for the next call
            const tensor two = ops::matmul(a, b);
            graft::run_tasks(2, [](int) {});
            const tensor two_pre = ops::matmul(a, b, {false, false, pb.get()});
            check_close(two, one, 1e-6, 1e-6, "2 threads vs 1");
            check_close(two_pre, one_pre, 1e-6, 1e-6, "2 threads vs 1, b packed");
        }
        check_close(one, ref_matmul(a, b, false, false), 1e-4, 1e-4, "vs reference");
    }
}

TEST_CASE("nn MatMul: a row epilogue (fused bias and activation) gives the bits of the pass after the product") {
    // rows split between threads (b packed or not), columns split (N panels > M rows), one row
    // (gemv), one column, zero depth; each activation; 1-3 threads; every kernel family (the AVX-512
    // and AVX2 tiles apply it as they store: whole 16-column tiles, N 64 and 512, under AVX2)
    const std::vector<mm_case> cases = {{128, 512, 10}, {128, 784, 512}, {101, 50, 40}, {3, 64, 700},
                                        {1, 300, 70},   {40, 33, 1},     {7, 0, 20},   {13, 333, 64}};
    for (auto [isa, threads] : {std::pair{ops::gemm::kernel_isa::avx512, 1}, {ops::gemm::kernel_isa::avx512, 2},
                                {ops::gemm::kernel_isa::avx512, 3}, {ops::gemm::kernel_isa::avx2, 1},
                                {ops::gemm::kernel_isa::avx2, 2}, {ops::gemm::kernel_isa::portable, 2}}) {
        ops::gemm::limit_kernel(isa);  // (the CPU still bounds it)
        set_num_threads(threads);
        for (const auto& c : cases)
            for (auto act : {ops::bias_activation::none, ops::bias_activation::relu, ops::bias_activation::relu6,
                             ops::bias_activation::leaky_relu})
                for (bool packed : {false, true}) {
                    INFO("M=" << c.M << " K=" << c.K << " N=" << c.N << " threads=" << threads << " kernel cap "
                              << static_cast<int>(isa) << " act=" << static_cast<int>(act) << " packed=" << packed);
                    const tensor a = random_tensor(dtype::float32, {c.M, c.K}, 41);
                    const tensor b = random_tensor(dtype::float32, {c.K, c.N}, 42);
                    const tensor bias = random_tensor(dtype::float32, {c.N}, 43);
                    const auto pb = packed ? ops::pack_matmul_b(b, false) : nullptr;
                    tensor want = ops::matmul(a, b, {false, false, pb.get()});
                    ops::bias_activation_inplace(want, bias, act, 0.1f);
                    const ops::bias_act_epilogue epilogue(bias.data<float>(), c.N, act, 0.1f);
                    const auto rows = epilogue.rows();
                    ops::matmul_params p{false, false, pb.get()};
                    p.epilogue = &rows;
                    graft::run_tasks(threads, [](int) {});  // workers spinning: small products split too
                    CHECK(equal(ops::matmul(a, b, p), want));
                }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("nn MatMul: b packed beforehand (gemm::packed_b) gives the same bits as packing it per call") {
    // K past one and two panel depths (320), N partial panels and the one-block limit (3072), rows
    // split between threads (M >= N panels; under AVX-512 also every M >= 48 per thread, in 4-row
    // units: 101 rows as 52 + 49, 200 on 3 threads as 68 + 68 + 64; under AVX2 every M >= 24 per
    // thread, in 2-row units: 101 as 52 + 49 or 34 + 34 + 33, 128 as 64 + 64) and columns split (N
    // panels > M rows)
    const std::vector<mm_case> cases = {{128, 784, 512}, {37, 700, 100}, {12, 5, 33}, {200, 64, 3072}, {13, 321, 17},
                                        {2, 96, 520},    {61, 129, 77},  {101, 50, 40}};
    for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
        ops::gemm::limit_kernel(isa);
        for (int threads : {1, 2, 3}) {
            set_num_threads(threads);
            for (const auto& c : cases)
                for (bool tb : {false, true}) {
                    INFO("M=" << c.M << " K=" << c.K << " N=" << c.N << " tb=" << tb << " threads=" << threads
                              << " kernel=" << static_cast<int>(isa));
                    const tensor a = random_tensor(dtype::float32, {c.M, c.K}, 21);
                    const tensor b = random_tensor(dtype::float32, tb ? shape{c.N, c.K} : shape{c.K, c.N}, 22);
                    const ops::gemm::packed_b<float> pb(
                        c.K, c.N,
                        ops::gemm::matrix_source<float>{b.data<float>(), tb ? c.K : 1, tb ? 1 : c.N, c.N});
                    REQUIRE(pb.packed());
                    CHECK(pb.fits(c.K, c.N));
                    CHECK_FALSE(pb.fits(c.K + 1, c.N));
                    const tensor plain = ops::matmul(a, b, {false, tb});
                    const tensor pre = ops::matmul(a, b, {false, tb, &pb});
                    CHECK(equal(plain, pre));
                    check_close(pre, ref_matmul(a, b, false, tb), 1e-4, 1e-4, "packed b vs reference");
                    // a packing of another size is not used (b is packed per call as usual)
                    const tensor other = random_tensor(dtype::float32, {c.K + 1, c.N}, 23);
                    const ops::gemm::packed_b<float> wrong(
                        c.K + 1, c.N, ops::gemm::matrix_source<float>{other.data<float>(), 1, c.N, c.N});
                    CHECK(equal(plain, ops::matmul(a, b, {false, tb, &wrong})));
                }
        }
    }
    set_num_threads(2);
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    // wider than one column block: not packed, and a product given it packs b itself
    const tensor w = random_tensor(dtype::float32, {8, 3073}, 24);
    const ops::gemm::packed_b<float> wide(8, 3073, ops::gemm::matrix_source<float>{w.data<float>(), 1, 3073, 3073});
    CHECK_FALSE(wide.packed());
    const tensor x = random_tensor(dtype::float32, {3, 8}, 25);
    CHECK(equal(ops::matmul(x, w), ops::matmul(x, w, {false, false, &wide})));
    // ops::pack_matmul_b: op(b) of a float32 host matrix, else nothing to pack
    const tensor a = random_tensor(dtype::float32, {20, 40}, 26);
    for (bool tb : {false, true}) {
        const tensor b = random_tensor(dtype::float32, tb ? shape{30, 40} : shape{40, 30}, 27);
        const auto pb = ops::pack_matmul_b(b, tb);
        REQUIRE(pb);
        CHECK(pb->fits(40, 30));
        CHECK(equal(ops::matmul(a, b, {false, tb}), ops::matmul(a, b, {false, tb, pb.get()})));
    }
    CHECK_FALSE(ops::pack_matmul_b(w, false));
    CHECK_FALSE(ops::pack_matmul_b(random_tensor(dtype::float64, {4, 5}, 28), false));
    CHECK_FALSE(ops::pack_matmul_b(random_tensor(dtype::float32, {2, 4, 5}, 29), false));
}

TEST_CASE("nn MatMul: a transposed b packs to the same panels as the same b untransposed (same bits)") {
    // the AVX2 path packs a b whose columns lie along k by 8x8 register transposes, the AVX-512 path
    // by 16x16 ones (its tail by the 8x8 ones, then elements): depths not a multiple of 8 or 16 (the
    // tails), past one panel depth (320), column counts short of, at and past one
    // 16-column panel, and two threads (each packs its own columns from an offset)
    for (std::int64_t K : {1, 7, 8, 9, 15, 16, 17, 31, 40, 320, 321, 700})
        for (std::int64_t N : {1, 15, 16, 17, 33, 520}) {
            const tensor bt = random_tensor(dtype::float32, {N, K}, 31);  // b^T, as MatMul(transpose_b) gets it
            const tensor b = ops::transpose(bt, {1, 0});
            const ops::gemm::packed_b<float> from_t(K, N, ops::gemm::matrix_source<float>{bt.data<float>(), K, 1, N});
            const ops::gemm::packed_b<float> plain(K, N, ops::gemm::matrix_source<float>{b.data<float>(), 1, N, N});
            const tensor a = random_tensor(dtype::float32, {40, K}, 32);
            for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                ops::gemm::limit_kernel(isa);
                INFO("K=" << K << " N=" << N << " kernel=" << static_cast<int>(isa));
                const ops::gemm::packed_b<float> t_here(K, N, ops::gemm::matrix_source<float>{bt.data<float>(), K, 1, N});
                const std::int64_t padded = (N + 15) / 16 * 16;
                CHECK(std::memcmp(t_here.panels(0, 0, 0), plain.panels(0, 0, 0),
                                  static_cast<std::size_t>(K * padded) * sizeof(float)) == 0);
                CHECK(std::memcmp(from_t.panels(0, 0, 0), plain.panels(0, 0, 0),
                                  static_cast<std::size_t>(K * padded) * sizeof(float)) == 0);
                for (int threads : {1, 2}) {
                    set_num_threads(threads);
                    CHECK(equal(ops::matmul(a, bt, {false, true}), ops::matmul(a, b)));
                }
            }
        }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: a transposed b under few rows of a runs as C^T = B^T A^T with the same bits (AVX2)") {
    // under AVX2, M <= 64 rows of a against a transposed b of N >= 128 columns (dX = dY * W^T at a
    // small batch) run as the transposed problem; each element the same multiply-adds in order, so
    // the bits of the same b laid out row-major; plus accumulating into C, 1-3 threads, and
    // shapes on either side of the rule
    for (std::int64_t M : {2, 5, 16, 33, 64, 65})
        for (std::int64_t N : {127, 128, 300})
            for (std::int64_t K : {7, 333}) {
                const tensor a = random_tensor(dtype::float32, {M, K}, 41);
                const tensor bt = random_tensor(dtype::float32, {N, K}, 42);
                const tensor b = ops::transpose(bt, {1, 0});
                const tensor c0 = random_tensor(dtype::float32, {M, N}, 43);
                const ops::gemm::matrix_source<float> A{a.data<float>(), K, 1, M};
                const ops::gemm::matrix_source<float> Bt{bt.data<float>(), K, 1, N}, B{b.data<float>(), 1, N, N};
                for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                    ops::gemm::limit_kernel(isa);
                    for (int threads : {1, 2, 3}) {
                        INFO("M=" << M << " N=" << N << " K=" << K << " kernel=" << static_cast<int>(isa) << " threads=" << threads);
                        set_num_threads(threads);
                        CHECK(equal(ops::matmul(a, bt, {false, true}), ops::matmul(a, b)));
                        for (bool acc : {false, true}) {
                            const tensor x = c0.clone(), y = c0.clone();
                            ops::gemm::run(M, N, K, A, Bt, x.data<float>(), N, 1, acc);
                            ops::gemm::run(M, N, K, A, B, y.data<float>(), N, 1, acc);
                            CHECK(equal(x, y));
                        }
                    }
                }
                ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx2);
                set_num_threads(1);
                check_close(ops::matmul(a, bt, {false, true}), ref_matmul(a, bt, false, true), 1e-4, 1e-4, "vs float64");
            }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: a row-major a under few columns of b, read in place, gives the bits of a packed a") {
    // under AVX-512 a row-major a times at most 256 columns runs its tiles of 12, 8, 6, 4, 2 or 1
    // rows in place (strided_rows) and packs only another last tile; a transposed a is always
    // packed, into the same panels: equal bits, over row counts that end on every tile size, both
    // sides of the 256-column rule, depths across kc blocks, a packed b, accumulating, 1-3 threads
    for (std::int64_t M : {1, 2, 3, 5, 8, 11, 12, 13, 20, 32, 97, 130})
        for (std::int64_t N : {10, 16, 33, 256, 257})
            for (std::int64_t K : {1, 7, 333, 700}) {
                const tensor a = random_tensor(dtype::float32, {M, K}, 51);
                const tensor at = ops::transpose(a, {1, 0});
                const tensor b = random_tensor(dtype::float32, {K, N}, 52);
                const tensor c0 = random_tensor(dtype::float32, {M, N}, 53);
                const ops::gemm::matrix_source<float> A{a.data<float>(), K, 1, M}, At{at.data<float>(), 1, M, M};
                const ops::gemm::matrix_source<float> B{b.data<float>(), 1, N, N};
                const ops::gemm::packed_b<float> pb(K, N, B);
                for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                    ops::gemm::limit_kernel(isa);
                    for (int threads : {1, 2, 3}) {
                        INFO("M=" << M << " N=" << N << " K=" << K << " kernel=" << static_cast<int>(isa) << " threads=" << threads);
                        set_num_threads(threads);
                        CHECK(equal(ops::matmul(a, b), ops::matmul(at, b, {true, false})));
                        for (bool acc : {false, true}) {
                            const tensor x = c0.clone(), y = c0.clone();
                            ops::gemm::run(M, N, K, A, B, x.data<float>(), N, 1, acc, 0, &pb);
                            ops::gemm::run(M, N, K, At, B, y.data<float>(), N, 1, acc);
                            CHECK(equal(x, y));
                        }
                    }
                }
                ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
                set_num_threads(1);
                check_close(ops::matmul(a, b), ref_matmul(a, b, false, false), 1e-4, 1e-4, "vs float64");
            }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: a block's short last tiles (AVX-512 8 + 5..8 rows, AVX2 5-row tiles or 4 + 3..4) give the bits of parts computed alone") {
    // under AVX-512 a block's last 13-16 rows after a 12-row tile run as an 8-row tile and one of
    // the rest whose rows start two rows into a packed panel; under AVX2 a block of 6q + r rows ends
    // on (5r mod 6) tiles of 5 rows, each from a panel of its own (M 15, 16, 25-28, 37, 38, 40; the
    // 32-row second block of M 128), or, too short for those, of 6q + 1 or 6q + 2 rows on tiles of
    // 4 and 3 or 4 rows, its last panel packed from two rows before its place (M 13, 14; the 8-row
    // second block of M 104), or, 6q + 3 rows short of 15, on a 3-row tile (M 9).
    // Every row gets the same multiply-adds in the same order whatever tile computes it, so the
    // product of all M rows is, bit for bit, the products of rows [0, s) and [s, M) side by side
    // (s = 12 and 1: other tilings), and close to float64. Packed A (more than 256 columns of B),
    // one and two B panels per tile (N 300: a last panel of 12 columns), depths across kc blocks,
    // a packed b, accumulating, a fused bias and ReLU, 1-2 threads (M 104 and 128 on 2 threads over
    // the packed b: 52 and 64 rows each, under AVX-512 12-row tiles then 16 = 8 + 8, under AVX2
    // 6 x 7 + 5 x 2 and 6 x 9 + 5 x 2; M 128 on one
    // thread: blocks of 96 and 32 = 6 x 2 + 5 x 4 under AVX2; M 13 and 16 under AVX-512: 12 + 1 and
    // 12 + 4, a block's first tile keeps its 12 rows)
    for (std::int64_t M : {9, 13, 14, 15, 16, 25, 26, 27, 28, 37, 38, 40, 104, 128})
        for (std::int64_t N : {300, 512})
            for (std::int64_t K : {7, 333}) {
                const tensor a = random_tensor(dtype::float32, {M, K}, 61);
                const tensor b = random_tensor(dtype::float32, {K, N}, 62);
                const tensor c0 = random_tensor(dtype::float32, {M, N}, 63);
                const tensor bias = random_tensor(dtype::float32, {N}, 64);
                const ops::gemm::matrix_source<float> A{a.data<float>(), K, 1, M};
                const ops::gemm::matrix_source<float> B{b.data<float>(), 1, N, N};
                const ops::gemm::packed_b<float> pb(K, N, B);
                const ops::gemm::packed_b<float>* unpacked = nullptr;
                const ops::bias_act_epilogue relu(bias.data<float>(), N, ops::bias_activation::relu);
                const auto rows = relu.rows();
                for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                    ops::gemm::limit_kernel(isa);
                    for (int threads : {1, 2})
                        for (bool acc : {false, true})
                            for (bool fused : {false, true}) {
                                INFO("M=" << M << " N=" << N << " K=" << K << " kernel=" << static_cast<int>(isa)
                                          << " threads=" << threads << " acc=" << acc << " fused=" << fused);
                                set_num_threads(threads);
                                const tensor whole = c0.clone();
                                const auto* epi = fused ? &rows : nullptr;
                                ops::gemm::run(M, N, K, A, B, whole.data<float>(), N, 1, acc, 0, &pb, epi);
                                set_num_threads(1);  // the parts on one thread: their own tiles
                                for (std::int64_t split : {12, 1}) {
                                    if (split >= M) continue;
                                    const tensor parts = c0.clone();
                                    const ops::gemm::matrix_source<float> top{a.data<float>(), K, 1, split};
                                    const ops::gemm::matrix_source<float> rest{a.data<float>() + split * K, K, 1, M - split};
                                    ops::gemm::run(split, N, K, top, B, parts.data<float>(), N, 1, acc, 1, unpacked, epi);
                                    ops::gemm::run(M - split, N, K, rest, B, parts.data<float>() + split * N, N, 1, acc,
                                                   1, unpacked, epi);
                                    CHECK(equal(whole, parts));
                                }
                                if (!acc && !fused)
                                    check_close(whole, ref_matmul(a, b, false, false), 1e-4, 1e-4, "vs float64");
                            }
                }
            }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: two a's stacked (stacked_source) give the bits of a product per part") {
    // C = [A1; A2] * B as one product (B packed once) against one product per part: equal bits, over
    // seams inside and at the end of 6- and 12-row tiles, row-major and transposed parts (an LSTM's
    // [x | h_prev]^T), depths across kc blocks, accumulating, 1-3 threads, every kernel
    for (auto [M1, M2] : {std::pair<std::int64_t, std::int64_t>{9, 43}, {12, 12}, {1, 5}, {128, 128}, {7, 0}, {0, 13}})
        for (std::int64_t N : {10, 64, 200})
            for (std::int64_t K : {3, 333}) {
                const tensor a1 = random_tensor(dtype::float32, {K, M1}, 61), a2 = random_tensor(dtype::float32, {M2, K}, 62);
                const tensor b = random_tensor(dtype::float32, {K, N}, 63);
                const tensor c0 = random_tensor(dtype::float32, {M1 + M2, N}, 64);
                const ops::gemm::matrix_source<float> A1{a1.data<float>(), 1, M1, M1}, A2{a2.data<float>(), K, 1, M2};
                const ops::gemm::matrix_source<float> B{b.data<float>(), 1, N, N};
                for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                    ops::gemm::limit_kernel(isa);
                    for (int threads : {1, 2, 3}) {
                        INFO("M1=" << M1 << " M2=" << M2 << " N=" << N << " K=" << K << " kernel=" << static_cast<int>(isa)
                                   << " threads=" << threads);
                        set_num_threads(threads);
                        for (bool acc : {false, true}) {
                            const tensor x = c0.clone(), y = c0.clone();
                            ops::gemm::run(M1 + M2, N, K, ops::gemm::stacked_source<float>{A1, A2}, B, x.data<float>(), N, 1,
                                           acc);
                            ops::gemm::run(M1, N, K, A1, B, y.data<float>(), N, 1, acc);
                            ops::gemm::run(M2, N, K, A2, B, y.data<float>() + M1 * N, N, 1, acc);
                            CHECK(equal(x, y));
                        }
                    }
                }
            }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: an A panel packed by register transposes is the scalar packing, byte for byte") {
    // depths short of, at and past the 8- (AVX2) and 16-deep (AVX-512) steps, from an offset depth
    const std::int64_t M = 20, K = 700;
    const tensor a = random_tensor(dtype::float32, {M, K}, 33);
    const ops::gemm::matrix_source<float> A{a.data<float>(), K, 1, M};
    for (std::int64_t kc : {1, 7, 8, 9, 16, 17, 143, 320})
        for (std::int64_t o0 : {0, 6, 14}) {
            ops::gemm::limit_kernel(ops::gemm::kernel_isa::portable);
            std::vector<float> want(static_cast<std::size_t>(6 * kc + 16), -1.f);
            ops::gemm::detail::pack_a_panel(A, o0, 3, kc, want.data(), false);
            for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
                ops::gemm::limit_kernel(isa);
                INFO("kc=" << kc << " o0=" << o0 << " kernel=" << static_cast<int>(isa));
                std::vector<float> got(want.size(), -1.f);  // nothing written past the panel either
                ops::gemm::detail::pack_a_panel(A, o0, 3, kc, got.data(), isa == ops::gemm::kernel_isa::avx512);
                CHECK(got == want);
            }
        }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
}

TEST_CASE("nn gemv: large B in row blocks, accumulating and strided, the same bits on any thread count") {
    // [K,N] = [1000,300] (1.2 MB) and [784,512]: cut into row blocks (an even number of them, more
    // than one), each block's sums then the blocks' sums in order; y strided (incy 3) and accumulated
    // onto its previous values
    for (auto [K_b, N_b] : {std::pair<std::int64_t, std::int64_t>{1000, 300}, {784, 512}, {2000, 37}}) {
        auto& K = K_b; auto& N = N_b;  // clang 14: lambdas cannot capture structured bindings
        const double bytes = 4.0 * static_cast<double>(K * N);
        const int blocks = ops::gemm::gemv_depth_blocks(bytes, K);
        INFO("K=" << K << " N=" << N << " blocks=" << blocks);
        if (bytes >= 2 * ops::gemm::kGemvBytesPerThread) {
            CHECK(blocks > 1);
            CHECK(blocks % 2 == 0);
        }
        const tensor x = random_tensor(dtype::float32, {1, K}, 21), w = random_tensor(dtype::float32, {K, N}, 22);
        const tensor want = ref_matmul(x, w, false, false);
        const float* xp = x.data<float>();
        const ops::gemm::matrix_source<float> B{w.data<float>(), 1, N, N};
        for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
            ops::gemm::limit_kernel(isa);
            std::vector<std::vector<float>> results;
            for (int threads : {1, 2, 3}) {
                set_num_threads(threads);
                std::vector<float> y(static_cast<std::size_t>(3 * N), 0.5f);
                ops::gemm::gemv(N, K, xp, 1, B, y.data(), 3, true);
                for (std::int64_t n = 0; n < N; ++n) {
                    INFO("isa=" << static_cast<int>(isa) << " threads=" << threads << " n=" << n);
                    CHECK(y[static_cast<std::size_t>(3 * n)] ==
                          doctest::Approx(0.5 + want.data<double>()[n]).epsilon(1e-4).scale(1.0));
                    CHECK(y[static_cast<std::size_t>(3 * n + 1)] == 0.5f);  // between the strided outputs
                }
                results.push_back(std::move(y));
            }
            CHECK(results[0] == results[1]);
            CHECK(results[0] == results[2]);
        }
#ifdef GRAFT_X86_DISPATCH
        if (ops::gemm::detail::cpu_has_avx2_fma()) {  // AVX2's row-block kernel sums as its column sweep
            std::vector<float> rows(static_cast<std::size_t>(N)), sweep(static_cast<std::size_t>(N));
            const std::int64_t k0 = K / 3;  // a block that starts inside B, with K - k0 not a multiple of 4
            const ops::gemm::matrix_source<float> tail{B.data + k0 * N, 1, N, N};
            ops::gemm::detail::gemv_block_rows_avx2(k0, K, N, xp, 1, B, rows.data());
            ops::gemm::detail::gemv_avx2(0, N, K - k0, xp + k0, 1, tail, sweep.data(), 1, false);
            CHECK(rows == sweep);
            // the blocks' sums (y contiguous): the vector sum adds them in the scalar loop's order
            for (int nb : {1, 2, 4, 6})
                for (bool acc : {false, true}) {
                    const tensor parts = random_tensor(dtype::float32, {nb, N}, 34);
                    const tensor y0 = random_tensor(dtype::float32, {N}, 35);
                    std::vector<float> want_sum(y0.data<float>(), y0.data<float>() + N), got = want_sum;
                    for (std::int64_t n = 0; n < N; ++n) {
                        float t = parts.data<float>()[n];
                        for (int b = 1; b < nb; ++b) t += parts.data<float>()[b * N + n];
                        want_sum[static_cast<std::size_t>(n)] = (acc ? want_sum[static_cast<std::size_t>(n)] : 0.f) + t;
                    }
                    ops::gemm::detail::gemv_sum_blocks_avx2(nb, N, parts.data<float>(), got.data(), acc);
                    INFO("blocks=" << nb << " accumulate=" << acc);
                    CHECK(got == want_sum);
                }
        }
#endif
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("nn gemv of a B packed for the GEMM: one sweep per column, the same bits on any thread count and kernel width") {
    // K past one kc_block (320) and not a multiple of it; N not a multiple of the 16-column panel
    // nor of the 4-panel (AVX2) or 8-panel (AVX-512) group; [784,512] is the MLP's first layer,
    // [400,120] LeNet's fc1 (8 panels, the last half full), 200 columns 8 + 5 panels
    for (auto [K_b, N_b] : {std::pair<std::int64_t, std::int64_t>{784, 512}, {700, 37}, {5, 3}, {321, 100}, {1000, 300},
                            {400, 120}, {50, 200}}) {
        auto& K = K_b; auto& N = N_b;
        INFO("K=" << K << " N=" << N);
        const tensor x = random_tensor(dtype::float32, {1, K}, 23), w = random_tensor(dtype::float32, {K, N}, 24);
        const tensor want = ref_matmul(x, w, false, false);
        const float* xp = x.data<float>();
        const ops::gemm::matrix_source<float> B{w.data<float>(), 1, N, N};
        const ops::gemm::packed_b<float> P(K, N, B);
        REQUIRE(P.packed());
        CHECK_FALSE(ops::gemm::gemv_packed(N, K + 1, xp, 1, P, nullptr, 1, false));  // packed for another K
        // the grouped copies (4 and 8 panels to a group) are made once, on first use
        CHECK(P.grouped(3) == nullptr);
        const float* g4 = P.grouped(4);
        REQUIRE(g4 != nullptr);
        CHECK(P.grouped(4) == g4);
        CHECK(P.grouped(8) != g4);
        for (ops::gemm::kernel_isa isa : ops::gemm::available_kernels()) {
            ops::gemm::limit_kernel(isa);
            std::vector<float> sweep(static_cast<std::size_t>(N), 0.25f);
            ops::gemm::detail::gemv_columns(isa, 0, N, K, xp, 1, B, sweep.data(), 1, true);
            // each thread count twice: every other sweep reads the groups backwards, the same bits
            for (int threads : {1, 1, 2, 2, 3, 3}) {
                set_num_threads(threads);
                std::vector<float> y(static_cast<std::size_t>(N), 0.25f);
                const bool used = ops::gemm::gemv_packed(N, K, xp, 1, P, y.data(), 1, true);
                INFO("isa=" << static_cast<int>(isa) << " threads=" << threads);
                CHECK(used == (isa != ops::gemm::kernel_isa::portable));  // the AVX2 and AVX-512 paths
                if (!used) continue;
                for (std::int64_t n = 0; n < N; ++n)
                    CHECK(y[static_cast<std::size_t>(n)] == doctest::Approx(0.25 + want.data<double>()[n]).epsilon(1e-4).scale(1.0));
                CHECK(y == sweep);  // the column sweep's bits: k = 0..K-1, one fused multiply-add each
            }
            const bool next = P.next_sweep_reversed();
            CHECK(P.next_sweep_reversed() != next);  // the direction alternates
            // MatMul with the packed b at batch 1: the same values as without it
            set_num_threads(2);
            const tensor pw = ops::matmul(x, w, {false, false, &P}), plain = ops::matmul(x, w);
            const tensor dw = cast(plain, dtype::float64);
            for (std::int64_t n = 0; n < N; ++n)
                CHECK(pw.data<float>()[n] == doctest::Approx(dw.data<double>()[n]).epsilon(1e-5).scale(1.0));
        }
    }
    ops::gemm::limit_kernel(ops::gemm::kernel_isa::avx512);
    set_num_threads(2);
}

TEST_CASE("gemm: GRAFT_MAX_CPU_ISA sets the kernel cap (any case), another value is ignored") {
    namespace g = graft::ops::gemm;
    const char* old = std::getenv("GRAFT_MAX_CPU_ISA");
    const std::string saved = old ? old : "";
    auto cap_for = [](const char* v) {
        if (v) setenv("GRAFT_MAX_CPU_ISA", v, 1);
        else unsetenv("GRAFT_MAX_CPU_ISA");
        return static_cast<g::kernel_isa>(g::detail::isa_cap_from_env());
    };
    CHECK(cap_for(nullptr) == g::kernel_isa::avx512);
    CHECK(cap_for("") == g::kernel_isa::avx512);
    CHECK(cap_for("AVX2") == g::kernel_isa::avx2);
    CHECK(cap_for("avx2") == g::kernel_isa::avx2);
    CHECK(cap_for("portable") == g::kernel_isa::portable);
    CHECK(cap_for("avx512") == g::kernel_isa::avx512);
    CHECK(cap_for("sse9") == g::kernel_isa::avx512);  // reported on stderr, ignored
    if (old) setenv("GRAFT_MAX_CPU_ISA", saved.c_str(), 1);
    else unsetenv("GRAFT_MAX_CPU_ISA");
    // the cap bounds what every kernel family asks for
    const g::kernel_isa best = g::active_kernel();
    g::limit_kernel(g::kernel_isa::portable);
    CHECK(g::active_kernel() == g::kernel_isa::portable);
    CHECK_FALSE(g::uses_avx2());
    g::limit_kernel(best);
    CHECK(g::active_kernel() == best);
}

TEST_CASE("nn MatMul: empty and zero-depth products") {
    const tensor a(dtype::float32, {3, 0}), b(dtype::float32, {0, 4});
    const tensor c = ops::matmul(a, b);
    CHECK(c.shape() == shape{3, 4});
    CHECK(equal(c, tensor(dtype::float32, {3, 4})));
    CHECK(ops::matmul(tensor(dtype::float32, {0, 5}), tensor(dtype::float32, {5, 2})).shape() == shape{0, 2});
}

TEST_CASE("nn MatMul: errors name the op and the shapes") {
    const tensor a(dtype::float32, {2, 3}), b(dtype::float32, {4, 5});
    CHECK_THROWS_WITH_AS(ops::matmul(a, b), doctest::Contains("MatMul: inner dimensions differ: a [2,3]"), shape_error);
    CHECK_THROWS_AS(ops::matmul(a, tensor(dtype::float64, {3, 2})), invalid_argument_error);
    CHECK_THROWS_AS(ops::matmul(tensor(dtype::float32, {2, 3, 1}), b), shape_error);
    CHECK_THROWS_WITH_AS(ops::matmul(tensor(dtype::int64, {2, 3}), tensor(dtype::int64, {3, 2})),
                         doctest::Contains("dtype int64 is not supported"), invalid_argument_error);
}

TEST_CASE("nn BatchMatMulV2: batches, adjoints and broadcast batch dims") {
    for (dtype t : {dtype::float32, dtype::float64}) {
        const tensor x = random_tensor(t, {2, 1, 4, 3}, 21);
        const tensor y = random_tensor(t, {3, 3, 5}, 22);
        const tensor z = ops::batch_matmul(x, y);
        REQUIRE(z.shape() == shape{2, 3, 4, 5});
        for (std::int64_t i = 0; i < 2; ++i)
            for (std::int64_t j = 0; j < 3; ++j) {
                const tensor xs = x.slice(i, 1).reshaped({4, 3});
                const tensor ys = y.slice(j, 1).reshaped({3, 5});
                const tensor zs = z.slice(i, 1).reshaped({3, 4, 5}).slice(j, 1).reshaped({4, 5});
                check_close(zs, ref_matmul(xs, ys, false, false), 1e-5, 1e-5, "broadcast batch");
            }
        // adj_x / adj_y on a plain batch
        const tensor xa = random_tensor(t, {3, 6, 2}, 23), ya = random_tensor(t, {3, 4, 6}, 24);
        const tensor za = ops::batch_matmul(xa, ya, {.adj_x = true, .adj_y = true});
        REQUIRE(za.shape() == shape{3, 2, 4});
        for (std::int64_t i = 0; i < 3; ++i) {
            check_close(za.slice(i, 1).reshaped({2, 4}),
                        ref_matmul(xa.slice(i, 1).reshaped({6, 2}), ya.slice(i, 1).reshaped({4, 6}), true, true), 1e-5,
                        1e-5, "adjoints");
        }
    }
    const tensor xi = tensor::from_vector<std::int64_t>({1, 2, 2}, {1, 2, 3, 4});
    const tensor yi = tensor::from_vector<std::int64_t>({2, 2, 1}, {1, 1, 2, 0});
    CHECK(equal(ops::batch_matmul(xi, yi), tensor::from_vector<std::int64_t>({2, 2, 1}, {3, 7, 2, 6})));
    CHECK_THROWS_WITH_AS(ops::batch_matmul(tensor(dtype::float32, {2, 4, 3}), tensor(dtype::float32, {3, 3, 5})),
                         doctest::Contains("cannot be broadcast"), shape_error);
    CHECK_THROWS_AS(ops::batch_matmul(tensor(dtype::float32, {4, 3}), tensor(dtype::float32, {4, 5})), shape_error);
}

TEST_CASE("nn BatchMatMulV2: many small float32 products run per batch in parallel") {
    const tensor x = random_tensor(dtype::float32, {64, 3, 5}, 31), y = random_tensor(dtype::float32, {64, 5, 2}, 32);
    const tensor z = ops::batch_matmul(x, y);
    for (std::int64_t i = 0; i < 64; i += 9) {
        check_close(z.slice(i, 1).reshaped({3, 2}),
                    ref_matmul(x.slice(i, 1).reshaped({3, 5}), y.slice(i, 1).reshaped({5, 2}), false, false), 1e-5, 1e-5,
                    "batch");
    }
}
