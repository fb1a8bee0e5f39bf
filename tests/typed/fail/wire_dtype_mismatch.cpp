// EXPECT: different dtypes.*wire_dtype_mismatch<[^!]*"g1/g1_output"[^!]*float[^!]*"g2/ids"[^!]*int
#include "two_models.hpp"  // G1 (scope g1) and G2 (scope g2)
#ifdef GRAFT_FAIL
using Net = connect<G1, G2, wire<"g1_output", "ids">>;
#else
using Net = connect<G1, G2, wire<"g1_output", "g2_input">>;
#endif
static_assert(Net::variables::size >= 2);
int main() {}
