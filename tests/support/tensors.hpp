// tests/support/tensors.hpp — small tensors from literals, and any tensor's values as doubles,
// for tests that check kernels by value:
//
//   using namespace graft::test;
//   auto x = f32({2, 2}, {1, 2, 3, 4});
//   CHECK(values(run(x))[3] == 4.0);           // any dtype, as doubles
//   CHECK(elements<std::int64_t>(ids)[0] == 7);  // T must be the dtype
#pragma once

#include <cstdint>
#include <vector>

#include "graft/core/tensor.hpp"
#include "graft/core/tensor_util.hpp"

namespace graft::test {

inline graft::tensor f32(const graft::shape& s, const std::vector<float>& v) { return graft::tensor::from_vector<float>(s, v); }
inline graft::tensor f64(const graft::shape& s, const std::vector<double>& v) { return graft::tensor::from_vector<double>(s, v); }
inline graft::tensor i32(const graft::shape& s, const std::vector<std::int32_t>& v) {
    return graft::tensor::from_vector<std::int32_t>(s, v);
}
inline graft::tensor i64(const graft::shape& s, const std::vector<std::int64_t>& v) {
    return graft::tensor::from_vector<std::int64_t>(s, v);
}
/// The elements of `t`, whose dtype must be T's (not checked beyond tensor::data's own check).
template <class T>
std::vector<T> elements(const graft::tensor& t) {
    return {t.data<T>(), t.data<T>() + t.num_elements()};
}
/// Every element of `t` as a double (cast through float64). Throws what graft::cast throws.
inline std::vector<double> values(const graft::tensor& t) {
    auto d = graft::cast(t, graft::dtype::float64);
    return {d.data<double>(), d.data<double>() + d.num_elements()};
}

}  // namespace graft::test
