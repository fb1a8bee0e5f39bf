// graft/typed/layers_types.hpp — hand-written networks as types: layers (dense, conv2d, pools,
// flatten, activations) and `sequential`, whose static shapes the compiler works out layer by
// layer. The type-level part only (light: it includes types.hpp and the standard library);
// include graft/typed/layers.hpp to build the graph (make_graph).
//
//   using namespace graft::typed;
//   using lenet = sequential<"lenet", input<"x", float, shape<-1, 28, 28, 1>>,
//                            conv2d<"conv1", 5, 5, 1, 6>, relu, max_pool<2>,               // 14x14x6
//                            conv2d<"conv2", 5, 5, 6, 16, 1, padding::valid>, relu, max_pool<2>,
//                            flatten, dense<"fc1", 400, 120>, relu, dense<"fc2", 120, 10>, softmax>;
//   static_assert(std::is_same_v<lenet::output_shape, shape<-1, 10>>);
//   using K = find_variable<lenet, "conv2/kernel">;               // variable<"lenet/conv2/kernel", float, shape<5, 5, 6, 16>>
//   // dense<"fc1", 300, 120> after the flatten: "dense<name, In, Out>: ... takes In features ..."
//   //   note: error::dense_layer_takes_features_but_gets<"fc1", 300, 400>
//
// A sequential is a graph_type (types.hpp): `inputs` = the input port "<scope>/<x>", `outputs` =
// the port "<scope>/output" whose tensor is the last op, `variables` = every layer's kernel and
// bias ("<scope>/fc1/kernel", ...), `leaves` = the sequential itself under its scope (its
// declared_* lists carry the names inside the built graph), `wires` = none. So it connects,
// clones and nests like a subgraph read from a file, and typed/bind.hpp builds it with
// make_graph() instead of reading a file.
//
// Names in the built graph are TF1 tf.layers' names: a named layer's ops under its name
// (fc1/MatMul, fc1/BiasAdd, conv1/Conv2D); an activation right after a dense or conv2d joins its
// scope (fc1/Relu, as `activation=` does), elsewhere it is a top-level op (Relu, Relu_1); unnamed
// layers get tf.layers' default scopes, numbered from the second one on (max_pooling2d/MaxPool,
// max_pooling2d_1/MaxPool, flatten/Reshape).
//
// Mistakes are static_asserts whose message is a sentence; g++'s note names the layer (its name,
// or the scope it would get) and the sizes: error::<what_is_wrong><"fc1", 300, 400>.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "graft/typed/types.hpp"

namespace graft {
struct meta_graph;
}

namespace graft::typed {

/// Padding of conv2d and the pools, as TF's "SAME" / "VALID".
enum class padding { same, valid };

/// The input of a sequential: a placeholder called `Name` in the built graph.
template <fixed_string Name, class T, class Shape>
using input = port<Name, T, Shape>;

// ---------------------------------------------------------------------------------------------
// The errors (a g++ note prints their template arguments: the layer and the sizes)
// ---------------------------------------------------------------------------------------------

namespace error {
#define GRAFT_TYPED_LAYER_ERROR(NAME, ...) \
    template <__VA_ARGS__>                 \
    struct NAME {                          \
        static constexpr bool value = false; \
    };
GRAFT_TYPED_LAYER_ERROR(dense_layer_takes_features_but_gets, fixed_string Layer, std::int64_t Takes, std::int64_t Gets)
GRAFT_TYPED_LAYER_ERROR(dense_layer_needs_rank_2_but_gets_rank, fixed_string Layer, std::size_t Rank)
GRAFT_TYPED_LAYER_ERROR(conv2d_layer_takes_channels_but_gets, fixed_string Layer, std::int64_t Takes, std::int64_t Gets)
GRAFT_TYPED_LAYER_ERROR(layer_needs_rank_4_nhwc_but_gets_rank, fixed_string Layer, std::size_t Rank)
GRAFT_TYPED_LAYER_ERROR(window_larger_than_image_with_valid_padding, fixed_string Layer, std::int64_t WindowH, std::int64_t WindowW,
                        std::int64_t ImageH, std::int64_t ImageW)
GRAFT_TYPED_LAYER_ERROR(flatten_needs_known_dims_but_gets_unknown_dim, fixed_string Layer, std::size_t Dim)
GRAFT_TYPED_LAYER_ERROR(flatten_needs_rank_2_or_more_but_gets_rank, fixed_string Layer, std::size_t Rank)
GRAFT_TYPED_LAYER_ERROR(softmax_needs_rank_1_or_more, fixed_string Layer)
GRAFT_TYPED_LAYER_ERROR(sizes_must_be_positive_in_layer, fixed_string Layer)
GRAFT_TYPED_LAYER_ERROR(two_layers_named, fixed_string Name)
GRAFT_TYPED_LAYER_ERROR(sequential_dtype_must_be_float_or_double, fixed_string Scope, class T)
#undef GRAFT_TYPED_LAYER_ERROR
}  // namespace error

namespace layers_detail {

/// Number of decimal digits of n.
constexpr std::size_t digits(std::size_t n) {
    std::size_t d = 1;
    while (n >= 10) n /= 10, ++d;
    return d;
}

/// "Base" (K = 0) or "Base_K", as TF makes scope names unique.
template <fixed_string Base, std::size_t K>
constexpr auto numbered() {
    constexpr std::size_t len = Base.length + (K == 0 ? 0 : 1 + digits(K));
    fixed_string<len + 1> r{};
    for (std::size_t i = 0; i < Base.length; ++i) r.chars[i] = Base.chars[i];
    if constexpr (K != 0) {
        r.chars[Base.length] = '_';
        std::size_t k = K;
        for (std::size_t i = len; i > Base.length + 1; --i, k /= 10) r.chars[i - 1] = static_cast<char>('0' + k % 10);
    }
    return r;
}

/// The output size of a window of `k` at `stride` over `n` (-1: unknown), TF's SAME / VALID rule.
constexpr std::int64_t window_out(std::int64_t n, std::int64_t k, std::int64_t stride, padding p) {
    if (n < 0) return -1;
    if (p == padding::same) return (n + stride - 1) / stride;
    return n >= k ? (n - k) / stride + 1 : 1;  // (the too-small case is a static_assert)
}

/// A VALID window larger than the (known) image.
constexpr bool too_small(padding p, std::int64_t kh, std::int64_t kw, std::int64_t h, std::int64_t w) {
    return p == padding::valid && ((h >= 0 && h < kh) || (w >= 0 && w < kw));
}

template <class S>
struct dims_of;
template <std::int64_t... D>
struct dims_of<shape<D...>> {
    static constexpr std::size_t rank = sizeof...(D);
    static constexpr std::array<std::int64_t, sizeof...(D) + 1> d{D..., 0};  // +1: never empty
    static constexpr std::int64_t at(std::size_t i) { return i < rank ? d[i] : -1; }
    static constexpr std::int64_t last() { return rank ? d[rank - 1] : -1; }
};

/// Product of dims 1.. (the first unknown one's index in `unknown`, else npos).
template <class S>
struct inner_product {
    using D = dims_of<S>;
    static constexpr std::size_t unknown = [] {
        for (std::size_t i = 1; i < D::rank; ++i) {
            if (D::d[i] < 0) return i;
        }
        return detail::npos;
    }();
    static constexpr std::int64_t value = [] {
        std::int64_t n = 1;
        for (std::size_t i = 1; i < D::rank; ++i) n *= D::d[i] < 0 ? 1 : D::d[i];
        return n;
    }();
};

/// A layer with no variables that keeps its input's shape.
template <class S>
struct same_shape {
    using type = S;
    using vars = variables<>;
};

}  // namespace layers_detail

// ---------------------------------------------------------------------------------------------
// Layers. Each: own_name (empty when unnamed), base (the default scope), op (its output op's
// type), is_activation, and apply<T, InShape, Scope>: the output `type` and the `vars` (names
// relative to the graph) or a static_assert naming the layer.
// ---------------------------------------------------------------------------------------------

/// tf.layers.dense: y = x @ kernel[In, Out] + bias[Out]; ops "<Name>/MatMul", "<Name>/BiasAdd";
/// variables "<Name>/kernel" (glorot-uniform) and "<Name>/bias" (zeros). Takes [batch, In].
template <fixed_string Name, std::int64_t In, std::int64_t Out>
struct dense {
    static_assert(!Name.empty() || error::empty_scope<Name>::value, "dense<\"name\", In, Out>: the layer needs a name");
    static_assert((In > 0 && Out > 0) || error::sizes_must_be_positive_in_layer<Name>::value,
                  "dense<\"name\", In, Out>: In and Out must be positive");
    static constexpr auto own_name = Name;
    static constexpr auto base = Name;
    static constexpr fixed_string op = "BiasAdd";
    static constexpr bool is_activation = false;
    static constexpr std::int64_t in_features = In, out_features = Out;

    template <class T, class S, fixed_string Scope>
    struct apply {
        using D = layers_detail::dims_of<S>;
        static_assert(D::rank == 2 || error::dense_layer_needs_rank_2_but_gets_rank<Name, D::rank>::value,
                      "dense<name, In, Out>: the layer takes a matrix [batch, In] but gets a tensor of another rank; put flatten before it");
        static_assert(D::rank != 2 || D::last() == In || error::dense_layer_takes_features_but_gets<Name, In, D::last()>::value,
                      "dense<name, In, Out>: the layer takes In features but the layer before it gives another number (the note shows the layer's name, In and what it gets; -1: unknown)");
        using type = shape<D::at(0), Out>;
        using vars = variables<variable<join<Name, "kernel">, T, shape<In, Out>>, variable<join<Name, "bias">, T, shape<Out>>>;
    };
};

/// tf.layers.conv2d on NHWC: kernel [KH, KW, Cin, Cout] (glorot-uniform) + bias [Cout] (zeros);
/// ops "<Name>/Conv2D", "<Name>/BiasAdd"; strides [1, Stride, Stride, 1]; TF's SAME or VALID.
template <fixed_string Name, std::int64_t KH, std::int64_t KW, std::int64_t Cin, std::int64_t Cout,
          std::int64_t Stride = 1, padding Pad = padding::same>
struct conv2d {
    static_assert(!Name.empty() || error::empty_scope<Name>::value, "conv2d<\"name\", ...>: the layer needs a name");
    static_assert((KH > 0 && KW > 0 && Cin > 0 && Cout > 0 && Stride > 0) || error::sizes_must_be_positive_in_layer<Name>::value,
                  "conv2d<\"name\", KH, KW, Cin, Cout, Stride, padding>: the sizes and the stride must be positive");
    static constexpr auto own_name = Name;
    static constexpr auto base = Name;
    static constexpr fixed_string op = "BiasAdd";
    static constexpr bool is_activation = false;
    static constexpr std::int64_t kernel_h = KH, kernel_w = KW, in_channels = Cin, out_channels = Cout, stride = Stride;
    static constexpr padding pad = Pad;

    template <class T, class S, fixed_string Scope>
    struct apply {
        using D = layers_detail::dims_of<S>;
        static_assert(D::rank == 4 || error::layer_needs_rank_4_nhwc_but_gets_rank<Name, D::rank>::value,
                      "conv2d<name, ...>: the layer takes an NHWC image batch (rank 4) but gets another rank");
        static_assert(D::rank != 4 || D::at(3) == Cin || error::conv2d_layer_takes_channels_but_gets<Name, Cin, D::at(3)>::value,
                      "conv2d<name, KH, KW, Cin, Cout>: the layer takes Cin channels but the layer before it gives another number (the note shows the layer's name, Cin and what it gets; -1: unknown)");
        static_assert(!layers_detail::too_small(Pad, KH, KW, D::at(1), D::at(2)) ||
                          error::window_larger_than_image_with_valid_padding<Name, KH, KW, D::at(1), D::at(2)>::value,
                      "conv2d<name, KH, KW, ...>: with padding::valid the kernel (KH x KW) is larger than the image it gets (the note shows both)");
        using type = shape<D::at(0), layers_detail::window_out(D::at(1), KH, Stride, Pad), layers_detail::window_out(D::at(2), KW, Stride, Pad), Cout>;
        using vars = variables<variable<join<Name, "kernel">, T, shape<KH, KW, Cin, Cout>>, variable<join<Name, "bias">, T, shape<Cout>>>;
    };
};

namespace layers_detail {
template <fixed_string Base, fixed_string Op, std::int64_t K, std::int64_t Stride, padding Pad>
struct pool_layer {
    static constexpr fixed_string<1> own_name{};
    static constexpr auto base = Base;
    static constexpr auto op = Op;
    static constexpr bool is_activation = false;
    static constexpr std::int64_t window = K, stride = Stride;
    static constexpr padding pad = Pad;

    template <class T, class S, fixed_string Scope>
    struct apply {
        static_assert((K > 0 && Stride > 0) || error::sizes_must_be_positive_in_layer<Scope>::value,
                      "max_pool<K, Stride, padding> / avg_pool<...>: the window and the stride must be positive");
        using D = dims_of<S>;
        static_assert(D::rank == 4 || error::layer_needs_rank_4_nhwc_but_gets_rank<Scope, D::rank>::value,
                      "max_pool / avg_pool: the layer takes an NHWC image batch (rank 4) but gets another rank (the note shows the layer's scope)");
        static_assert(!too_small(Pad, K, K, D::at(1), D::at(2)) ||
                          error::window_larger_than_image_with_valid_padding<Scope, K, K, D::at(1), D::at(2)>::value,
                      "max_pool / avg_pool: with padding::valid the window is larger than the image it gets (the note shows the layer's scope and both sizes)");
        using type = shape<D::at(0), window_out(D::at(1), K, Stride, Pad), window_out(D::at(2), K, Stride, Pad), D::at(3)>;
        using vars = variables<>;
    };
};

template <fixed_string Op>
struct activation_layer {
    static constexpr fixed_string<1> own_name{};
    static constexpr auto base = Op;
    static constexpr auto op = Op;
    static constexpr bool is_activation = true;
    template <class T, class S, fixed_string Scope>
    struct apply : same_shape<S> {};
};
}  // namespace layers_detail

/// tf.layers.max_pooling2d: a K x K window (default stride K, VALID as in tf.layers); op
/// "max_pooling2d[_n]/MaxPool".
template <std::int64_t K, std::int64_t Stride = K, padding Pad = padding::valid>
struct max_pool : layers_detail::pool_layer<"max_pooling2d", "MaxPool", K, Stride, Pad> {};

/// tf.layers.average_pooling2d: op "average_pooling2d[_n]/AvgPool".
template <std::int64_t K, std::int64_t Stride = K, padding Pad = padding::valid>
struct avg_pool : layers_detail::pool_layer<"average_pooling2d", "AvgPool", K, Stride, Pad> {};

/// tf.layers.flatten: Reshape to [-1, product of the other dims] ("flatten[_n]/Reshape").
struct flatten {
    static constexpr fixed_string<1> own_name{};
    static constexpr fixed_string base = "flatten";
    static constexpr fixed_string op = "Reshape";
    static constexpr bool is_activation = false;
    template <class T, class S, fixed_string Scope>
    struct apply {
        using D = layers_detail::dims_of<S>;
        using P = layers_detail::inner_product<S>;
        static_assert(D::rank >= 2 || error::flatten_needs_rank_2_or_more_but_gets_rank<Scope, D::rank>::value,
                      "flatten: the layer takes a batch of rank 2 or more");
        static_assert(P::unknown == detail::npos || error::flatten_needs_known_dims_but_gets_unknown_dim<Scope, P::unknown>::value,
                      "flatten: every dimension but the batch must be known to flatten (the note shows which one is not)");
        using type = shape<D::at(0), P::value>;
        using vars = variables<>;
    };
};

/// Activations: after a dense or conv2d their op joins its scope ("fc1/Relu"); elsewhere a
/// top-level op "Relu", "Relu_1", ...
struct relu : layers_detail::activation_layer<"Relu"> {};
struct tanh_act : layers_detail::activation_layer<"Tanh"> {};
struct sigmoid : layers_detail::activation_layer<"Sigmoid"> {};
/// Softmax over the last dimension.
struct softmax : layers_detail::activation_layer<"Softmax"> {
    template <class T, class S, fixed_string Scope>
    struct apply : layers_detail::same_shape<S> {
        static_assert(S::rank >= 1 || error::softmax_needs_rank_1_or_more<Scope>::value, "softmax: the layer takes a tensor of rank 1 or more");
    };
};

// ---------------------------------------------------------------------------------------------
// sequential
// ---------------------------------------------------------------------------------------------

namespace layers_detail {

/// The names each layer gets in the built graph (see the header comment).
template <class... L>
struct layer_names {
    static constexpr std::size_t n = sizeof...(L);
    static constexpr std::array<std::string_view, n + 1> own{L::own_name.view()..., {}};
    static constexpr std::array<std::string_view, n + 1> base{L::base.view()..., {}};
    static constexpr std::array<bool, n + 1> activation{L::is_activation..., false};

    /// Layer i joins the scope of the named layer before it.
    static constexpr bool attached(std::size_t i) { return activation[i] && i > 0 && !own[i - 1].empty(); }
    /// Unnamed, not attached: numbered among the earlier ones of its kind.
    static constexpr std::size_t number(std::size_t i) {
        std::size_t k = 0;
        for (std::size_t j = 0; j < i; ++j) {
            if (own[j].empty() && !attached(j) && base[j] == base[i]) ++k;
        }
        return k;
    }
    template <std::size_t I>
    using layer = std::tuple_element_t<I, std::tuple<L...>>;

    /// The scope of layer I: its name, the named layer it joins, or its numbered default.
    template <std::size_t I>
    static constexpr auto scope() {
        if constexpr (!layer<I>::own_name.empty()) {
            return layer<I>::own_name;
        } else if constexpr (attached(I)) {
            return layer<I - 1>::own_name;
        } else {
            return numbered<layer<I>::base, number(I)>();
        }
    }
    /// The op whose output 0 is layer I's output.
    template <std::size_t I>
    static constexpr auto op() {
        if constexpr (layer<I>::is_activation && !attached(I)) {
            return scope<I>();  // a top-level op: "Relu", "Relu_1"
        } else {
            return join<scope<I>(), layer<I>::op>;
        }
    }
    template <std::size_t I>
    static constexpr auto scope_storage = scope<I>();
    template <std::size_t I>
    static constexpr auto op_storage = op<I>();
};

/// Layer by layer: each layer's apply<> on the shape before it.
template <class T, class Names, std::size_t I, class S, class... L>
struct fold {
    using type = S;
    using vars = variables<>;
};
template <class T, class Names, std::size_t I, class S, class L, class... R>
struct fold<T, Names, I, S, L, R...> {
    using step = typename L::template apply<T, S, Names::template scope_storage<I>>;
    using next = fold<T, Names, I + 1, typename step::type, R...>;
    using type = typename next::type;
    using vars = detail::concat_t<typename step::vars, typename next::vars>;
};

/// The names the input, the "init" op and the layers take (attached activations take none).
template <class Names, std::size_t... I>
constexpr std::array<std::string_view, sizeof...(I) + 2> scope_names(std::string_view input, std::index_sequence<I...>) {
    return {input, "init", (Names::attached(I) ? std::string_view{} : Names::template scope_storage<I>.view())...};
}

/// No two layers (or a layer and the input) take the same name.
template <class Names, std::size_t N, fixed_string Input>
struct check_layer_names {
    static constexpr auto names = scope_names<Names>(Input.view(), std::make_index_sequence<N>{});
    static constexpr std::size_t dup = [] {
        for (std::size_t i = 1; i < names.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (!names[i].empty() && names[i] == names[j]) return i;
            }
        }
        return detail::npos;
    }();
    static constexpr std::size_t len = dup == detail::npos ? 0 : names[dup].size();
    static constexpr fixed_string<len + 1> name = [] {
        fixed_string<len + 1> r{};
        for (std::size_t i = 0; i < len; ++i) r.chars[i] = names[dup][i];
        return r;
    }();
    static_assert(dup == detail::npos || error::two_layers_named<name>::value,
                  "sequential<>: two layers (or a layer and the input, or a layer and the \"init\" op) have the same name; give each layer its own");
};

template <class T>
inline constexpr bool layer_dtype = std::is_same_v<T, float> || std::is_same_v<T, double>;

}  // namespace layers_detail

template <fixed_string Scope, class Input, class... Layers>
struct sequential {
    static_assert(sizeof(Input) == 0,
                  "sequential<\"scope\", input<\"x\", float, shape<...>>, layers...>: the second argument is the input<...>");
};

/// A feed-forward network: `Input` then each layer in turn. A graph_type (see the header
/// comment) plus: output_shape, value_type, and make_graph() (defined in typed/layers.hpp).
template <fixed_string Scope, fixed_string X, class T, class XShape, fixed_string XTensor, class... Layers>
struct sequential<Scope, port<X, T, XShape, XTensor>, Layers...> {
    static_assert(!Scope.empty() || error::empty_scope<Scope>::value, "sequential<\"scope\", ...>: the network needs a scope name");
    static_assert(sizeof...(Layers) > 0, "sequential<\"scope\", input<...>, layers...>: give at least one layer");
    static_assert(layers_detail::layer_dtype<T> || error::sequential_dtype_must_be_float_or_double<Scope, T>::value,
                  "sequential<>: the input's dtype must be float or double");
    static_assert(X.view() != "output", "sequential<>: the input cannot be called \"output\" (the name of the network's output port)");
    static_assert(X.view() == XTensor.view(), "sequential<>: the input is a placeholder named as the port: use input<\"x\", T, shape<...>>");

private:
    using names = layers_detail::layer_names<Layers...>;
    static_assert(sizeof(layers_detail::check_layer_names<names, sizeof...(Layers), X>) > 0);
    using chain = layers_detail::fold<T, names, 0, XShape, Layers...>;

public:
    static constexpr auto scope_name = Scope;
    static constexpr bool is_clone = false;
    using value_type = T;
    using input_shape = XShape;
    using output_shape = typename chain::type;
    /// The layers, in order.
    using layers = std::tuple<Layers...>;
    /// The op whose output is the network's output, in the built graph ("fc2/BiasAdd").
    static constexpr auto output_op = names::template op_storage<sizeof...(Layers) - 1>;
    /// The scope of layer I in the built graph ("fc1", "max_pooling2d_1"), and its output op.
    template <std::size_t I>
    static constexpr auto layer_scope = names::template scope_storage<I>;
    template <std::size_t I>
    static constexpr auto layer_op = names::template op_storage<I>;
    template <std::size_t I>
    static constexpr bool layer_attached = names::attached(I);

    using declared_inputs = typed::inputs<port<X, T, XShape>>;
    using declared_outputs = typed::outputs<port<"output", T, output_shape, output_op>>;
    using declared_variables = typename chain::vars;
    using lift = detail::rebase_fn<fixed_string<1>{}, Scope>;
    using inputs = typename declared_inputs::template renamed<lift>;
    using outputs = typename declared_outputs::template renamed<lift>;
    using variables = typename declared_variables::template renamed<lift>;
    using leaves = typed::leaves<leaf<Scope, sequential>>;
    using wires = typed::wires<>;

    /// The network as a MetaGraph, names as in declared_* (no scope): Placeholder X, the layers'
    /// ops and variables (glorot-uniform kernels from `seed`, zero biases; in the "variables" and
    /// "trainable_variables" collections) and the NoOp "init". Defined in graft/typed/layers.hpp.
    /// Throws graph_error (from building; never for a sequential that compiles).
    static graft::meta_graph make_graph(std::uint64_t seed = 1);
};

}  // namespace graft::typed
