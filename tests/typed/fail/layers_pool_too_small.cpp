// EXPECT: max_pool / avg_pool: with padding::valid the window is larger than the image it gets.*window_larger_than_image_with_valid_padding<[a-z:_]*fixed_string<16>{"max_pooling2d_2"}, 2, 2, 1, 1>
#include "graft/typed/layers_types.hpp"
using namespace graft::typed;
#ifdef GRAFT_FAIL
using Bad = sequential<"cnn", input<"x", float, shape<-1, 8, 8, 1>>, conv2d<"conv1", 3, 3, 1, 4, 2>, max_pool<2>, max_pool<2>,
                       max_pool<2>, flatten, dense<"fc1", 4, 10>>;
#else
using Bad = sequential<"cnn", input<"x", float, shape<-1, 8, 8, 1>>, conv2d<"conv1", 3, 3, 1, 4, 2>, max_pool<2>, max_pool<2>,
                       max_pool<1>, flatten, dense<"fc1", 4, 10>>;
#endif
static_assert(Bad::variables::size > 0);
int main() {}
