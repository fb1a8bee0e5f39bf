// Compile-time graph types: the interface of a subgraph (its ports, variables and scope) stated in
// C++ types, and grafting as type composition that the compiler checks.
//
//   using namespace graft::typed;
//   using G1 = subgraph<"g1", inputs<port<"x", float, shape<-1, 784>>>,
//                             outputs<port<"code", float, shape<-1, 256>, "dense/Relu">>,
//                             variables<variable<"dense/kernel", float, shape<784, 256>>,
//                                       variable<"dense/bias", float, shape<256>>>>;
//   using G2 = subgraph<"g2", inputs<port<"code", float, shape<-1, 256>>>,
//                             outputs<port<"logits", float, shape<-1, 10>, "add">>>;
//   using Net = connect<G1, G2, wire<"g1/code", "g2/code">>;
//   static_assert(Net::inputs::size == 1);                          // g1/x: g2/code is wired
//   using W = find_variable<Net, "g1/dense/kernel">;               // shape<784, 256>
//   using Twice = connect<Net, clone<Net, "copy">, wire<"g2/logits", "copy/g1/x">>;  // mistakes:
//   // connect<G1, G2, wire<"g1/cod", "g2/code">>  -> "no output port named g1/cod"
//
// Names: a port is `port<Name, T, Shape, Tensor = Name>` — Name is what C++ code calls it, Tensor
// the tensor in the model file ("op" means "op:0"). Inside a subgraph<"g1", ...> every port,
// variable and tensor is seen under the subgraph's scope: `g1/x`, `g1/dense/kernel`. Lookups take
// the full name or any unambiguous tail after a '/': "x", "dense/kernel".
//
// Composition (each is again a subgraph type with the same members):
//   connect<A, B, wire<"a_out", "b_in">..., [expose<"name"...>]> — inputs: the unwired inputs of A
//     and B; outputs: the exposed ones (default: all of A's and B's); variables: both sets.
//     A wire's source is an output of A, its target an input of B.
//   clone<G, "copy"> — G under a new scope: G's scope (or, for a scopeless composition, the root)
//     renamed to "copy" in every port, variable and tensor; its variables are new ones.
//   scope<"a", G> — G nested under "a".
// Members: scope_name, inputs, outputs, variables (typed lists with ::size), leaves (the model
// files, each with the scope it lands under), wires (resolved port pairs; the runtime binding in
// typed/bind.hpp feeds these to the surgery layer).
//
// Mistakes are static_asserts whose message says what is wrong; the instantiation in g++'s note
// names the ports and scopes (error::<sentence><"name", ...>).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

namespace graft::typed {

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// A string usable as a template argument: `port<"logits", ...>`.
template <std::size_t N>
struct fixed_string {
    char chars[N]{};

    constexpr fixed_string() = default;
    constexpr fixed_string(const char (&s)[N]) { std::copy_n(s, N, chars); }  // NOLINT(implicit)

    static constexpr std::size_t length = N - 1;
    constexpr std::string_view view() const { return {chars, N - 1}; }
    constexpr operator std::string_view() const { return view(); }  // NOLINT(implicit)
    constexpr bool empty() const { return N == 1; }
};
template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N>;

namespace detail {

/// `name` equals `scope` or lies under it ("g1" holds "g1" and "g1/x", not "g10").
constexpr bool under(std::string_view name, std::string_view scope) {
    if (scope.empty()) return true;
    return name == scope || (name.size() > scope.size() && name.starts_with(scope) && name[scope.size()] == '/');
}

/// Two scopes overlap when one holds the other.
constexpr bool overlap(std::string_view a, std::string_view b) { return under(a, b) || under(b, a); }

/// `name` with the leading scope `from` replaced by `to` ("" from: `to` is prepended).
constexpr std::size_t rebased_length(std::string_view from, std::string_view to, std::string_view name) {
    if (!under(name, from)) return name.size();
    std::size_t rest = name.size() - from.size();  // "" or "/..." (or the whole name when from = "")
    if (from.empty()) return to.empty() ? name.size() : (name.empty() ? to.size() : to.size() + 1 + name.size());
    return to.empty() ? (rest == 0 ? 0 : rest - 1) : to.size() + rest;
}

template <fixed_string From, fixed_string To, fixed_string Name>
constexpr auto rebase() {
    constexpr std::string_view f = From.view(), t = To.view(), n = Name.view();
    constexpr std::size_t len = rebased_length(f, t, n);
    fixed_string<len + 1> r{};
    std::size_t k = 0;
    auto put = [&](std::string_view s) { for (char c : s) r.chars[k++] = c; };
    if (!under(n, f)) {
        put(n);
    } else if (f.empty()) {
        put(t);
        if (!t.empty() && !n.empty()) put("/");
        put(n);
    } else {
        std::string_view rest = n.substr(f.size());
        if (t.empty()) {
            if (!rest.empty()) put(rest.substr(1));
        } else {
            put(t);
            put(rest);
        }
    }
    return r;
}

/// A renaming of every name in a graph type: scope `From` -> `To`.
template <fixed_string From, fixed_string To>
struct rebase_fn {
    template <fixed_string Name>
    static constexpr auto apply = rebase<From, To, Name>();
};

}  // namespace detail

/// "a" + "/" + "b" (either side may be empty).
template <fixed_string A, fixed_string B>
inline constexpr auto join = detail::rebase<fixed_string<1>{}, A, B>();

// ---------------------------------------------------------------------------------------------
// Shapes, ports, variables
// ---------------------------------------------------------------------------------------------

/// A dimension whose size is known only at run time (the batch).
inline constexpr std::int64_t any = -1;

/// A static shape; -1 (`any`) is an unknown dimension.
template <std::int64_t... D>
struct shape {
    static constexpr std::size_t rank = sizeof...(D);
    static constexpr std::array<std::int64_t, sizeof...(D)> dims{D...};
    static constexpr bool fully_known = ((D >= 0) && ...);
    /// Elements per row when only the first dimension is unknown (the batch): the product of the rest.
    static constexpr std::int64_t inner_elements() {
        std::int64_t n = 1;
        for (std::size_t i = 1; i < rank; ++i) n *= dims[i] < 0 ? 1 : dims[i];
        return n;
    }
};

template <class A, class B>
struct compatible_shapes;
template <std::int64_t... A, std::int64_t... B>
struct compatible_shapes<shape<A...>, shape<B...>> {
    static constexpr bool value = [] {
        if constexpr (sizeof...(A) != sizeof...(B)) {
            return false;
        } else {
            return ((A < 0 || B < 0 || A == B) && ...);
        }
    }();
};
/// Same rank and every dimension equal or unknown on one side.
template <class A, class B>
inline constexpr bool compatible_shapes_v = compatible_shapes<A, B>::value;

/// A tensor a subgraph takes or gives. `Tensor` is its name in the model file ("op" = "op:0").
template <fixed_string Name, class T, class Shape, fixed_string Tensor = Name>
struct port {
    static constexpr auto name = Name;
    static constexpr auto tensor = Tensor;
    using value_type = T;
    using shape_type = Shape;
    static constexpr std::size_t rank = Shape::rank;
    template <class R>
    using renamed = port<R::template apply<Name>, T, Shape, R::template apply<Tensor>>;
};

/// A variable (its node name in the model file) with its dtype and static shape.
template <fixed_string Name, class T, class Shape>
struct variable {
    static constexpr auto name = Name;
    static constexpr auto tensor = Name;
    using value_type = T;
    using shape_type = Shape;
    static constexpr std::size_t rank = Shape::rank;
    template <class R>
    using renamed = variable<R::template apply<Name>, T, Shape>;
};

/// A model file's place in a composition: the subgraph type that describes it (names as in the
/// file) and the scope it is imported under.
template <fixed_string Scope, class Subgraph>
struct leaf {
    static constexpr auto scope = Scope;
    using subgraph_type = Subgraph;
    template <class R>
    using renamed = leaf<R::template apply<Scope>, Subgraph>;
};

/// A resolved wire: `Src` (an output) feeds `Dst` (an input); both with their full names.
template <class Src, class Dst>
struct bound_wire {
    using source = Src;
    using target = Dst;
    template <class R>
    using renamed = bound_wire<typename Src::template renamed<R>, typename Dst::template renamed<R>>;
};

/// Lists. `size`, and `at<i>`.
#define GRAFT_TYPED_LIST(NAME)                                                          \
    template <class... X>                                                                \
    struct NAME {                                                                        \
        static constexpr std::size_t size = sizeof...(X);                               \
        template <std::size_t I>                                                         \
        using at = std::tuple_element_t<I, std::tuple<X...>>;                           \
        template <class R>                                                               \
        using renamed = NAME<typename X::template renamed<R>...>;                       \
    };
GRAFT_TYPED_LIST(inputs)
GRAFT_TYPED_LIST(outputs)
GRAFT_TYPED_LIST(variables)
GRAFT_TYPED_LIST(leaves)
GRAFT_TYPED_LIST(wires)
#undef GRAFT_TYPED_LIST

/// In connect<>: the output `From` feeds the input `To`.
template <fixed_string From, fixed_string To>
struct wire {
    static constexpr auto from = From;
    static constexpr auto to = To;
};

/// In connect<>: the outputs the composition gives (default: all outputs of both parts).
template <fixed_string... Names>
struct expose {};

// ---------------------------------------------------------------------------------------------
// The errors: each a sentence whose template arguments g++ prints with the names.
// ---------------------------------------------------------------------------------------------

namespace error {
// Not derived from std::false_type: g++ would print that base instead of the sentence and its names.
template <auto...>
struct no_port_named {
    static constexpr bool value = false;
};
template <auto...>
struct no_output_port_named {
    static constexpr bool value = false;
};
template <auto...>
struct no_input_port_named {
    static constexpr bool value = false;
};
template <auto...>
struct no_variable_named {
    static constexpr bool value = false;
};
template <auto...>
struct several_ports_end_in {
    static constexpr bool value = false;
};
template <auto...>
struct several_variables_end_in {
    static constexpr bool value = false;
};
template <fixed_string Source, class SourceType, fixed_string Target, class TargetType>
struct wire_dtype_mismatch {
    static constexpr bool value = false;
};
template <fixed_string Source, class SourceShape, fixed_string Target, class TargetShape>
struct wire_shape_mismatch {
    static constexpr bool value = false;
};
template <auto...>
struct input_wired_twice {
    static constexpr bool value = false;
};
template <auto...>
struct overlapping_variable_scopes {
    static constexpr bool value = false;
};
template <auto...>
struct clone_into_a_scope_that_exists {
    static constexpr bool value = false;
};
template <auto...>
struct clone_into_its_own_scope {
    static constexpr bool value = false;
};
template <auto...>
struct duplicate_name_in_subgraph {
    static constexpr bool value = false;
};
template <auto...>
struct empty_scope {
    static constexpr bool value = false;
};
}  // namespace error

// ---------------------------------------------------------------------------------------------
// Lookup by name
// ---------------------------------------------------------------------------------------------

namespace detail {

/// `full` is `q` or ends in "/" + q.
constexpr bool name_matches(std::string_view full, std::string_view q) {
    return full == q || (full.size() > q.size() && full.ends_with(q) && full[full.size() - q.size() - 1] == '/');
}

inline constexpr std::size_t npos = static_cast<std::size_t>(-1);

struct lookup_result {
    std::size_t index = npos;   ///< the match (exact wins; else the one tail match)
    std::size_t count = 0;      ///< tail matches when there is no exact one
    std::size_t second = npos;  ///< another match when count > 1
};

template <std::size_t N>
constexpr lookup_result lookup(const std::array<std::string_view, N>& names, std::string_view q) {
    lookup_result r;
    for (std::size_t i = 0; i < N; ++i) {
        if (names[i] == q) return {i, 1, npos};
    }
    for (std::size_t i = 0; i < N; ++i) {
        if (name_matches(names[i], q)) {
            if (r.count == 0) r.index = i;
            else if (r.count == 1) r.second = i;
            ++r.count;
        }
    }
    if (r.count != 1) r.index = npos;
    return r;
}

template <class L>
struct names_of;
template <template <class...> class L, class... X>
struct names_of<L<X...>> {
    static constexpr std::array<std::string_view, sizeof...(X)> value{X::name.view()...};
};

template <class L1, class L2>
struct concat;
template <template <class...> class L, class... A, class... B>
struct concat<L<A...>, L<B...>> {
    using type = L<A..., B...>;
};
template <class L1, class L2>
using concat_t = typename concat<L1, L2>::type;

template <class To, class From>
struct relist;
template <template <class...> class To, class... T, template <class...> class From, class... X>
struct relist<To<T...>, From<X...>> {
    using type = To<X...>;
};

/// What a failed lookup yields, so one mistake gives one error.
template <fixed_string Name>
using missing = port<Name, void, shape<>>;

template <class L, std::size_t I, fixed_string Name>
struct pick {
    using type = missing<Name>;
};
template <class L, std::size_t I, fixed_string Name>
    requires(I != npos)
struct pick<L, I, Name> {
    using type = typename L::template at<I>;
};

/// Elements of L at the indices `keep` lists (first `count` of them).
template <class L, auto Keep, class Seq>
struct select_impl;
template <template <class...> class L, class... X, auto Keep, std::size_t... K>
struct select_impl<L<X...>, Keep, std::index_sequence<K...>> {
    using type = L<typename L<X...>::template at<Keep.index[K]>...>;
};
template <std::size_t N>
struct index_set {
    std::array<std::size_t, N> index{};
    std::size_t count = 0;
};

/// The name of the I-th of X... ("" past the end: keeps a failed check from cascading).
template <std::size_t I, class... X>
constexpr auto name_at() {
    if constexpr (I < sizeof...(X)) {
        return std::tuple_element_t<I, std::tuple<X...>>::name;
    } else {
        return fixed_string<1>{};
    }
}

/// The names in a list are unique (the first duplicate's index, or npos).
template <std::size_t N>
constexpr std::size_t first_duplicate(const std::array<std::string_view, N>& names) {
    for (std::size_t i = 0; i < N; ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (names[i] == names[j]) return i;
        }
    }
    return npos;
}

}  // namespace detail

template <class G, fixed_string Name, class List = detail::concat_t<typename detail::relist<inputs<>, typename G::inputs>::type,
                                                                     typename detail::relist<inputs<>, typename G::outputs>::type>>
struct find_port_impl {
    static constexpr auto r = detail::lookup(detail::names_of<List>::value, Name.view());
    static_assert(r.count > 0 || error::no_port_named<Name, G::scope_name>::value,
                  "find_port<G, name>: G has no input or output port of this name (the note shows the name and G's scope)");
    static_assert(r.count < 2 || error::several_ports_end_in<Name>::value,
                  "find_port<G, name>: several ports end in this name; use the full name (scope/name)");
    using type = typename detail::pick<List, r.index, Name>::type;
};
/// The input or output port of G called `Name` (full name or an unambiguous tail).
template <class G, fixed_string Name>
using find_port = typename find_port_impl<G, Name>::type;

template <class G, fixed_string Name>
struct find_variable_impl {
    using list = typename G::variables;
    static constexpr auto r = detail::lookup(detail::names_of<list>::value, Name.view());
    static_assert(r.count > 0 || error::no_variable_named<Name, G::scope_name>::value,
                  "find_variable<G, name>: G has no variable of this name (the note shows the name and G's scope)");
    static_assert(r.count < 2 || error::several_variables_end_in<Name>::value,
                  "find_variable<G, name>: several variables end in this name; use the full name (scope/name)");
    using type = typename detail::pick<list, r.index, Name>::type;
};
/// The variable of G called `Name` (full name or an unambiguous tail).
template <class G, fixed_string Name>
using find_variable = typename find_variable_impl<G, Name>::type;

// ---------------------------------------------------------------------------------------------
// Subgraphs
// ---------------------------------------------------------------------------------------------

template <fixed_string Scope, class In, class Out, class Vars = variables<>>
struct subgraph {
    static_assert(sizeof(In) == 0, "subgraph<\"scope\", inputs<...>, outputs<...>, variables<...>>: the lists are inputs<>, outputs<>, variables<> in this order");
};

/// One model file's interface: the ports and variables by their names in the file; seen from
/// outside under `Scope`.
template <fixed_string Scope, class... I, class... O, class... V>
struct subgraph<Scope, inputs<I...>, outputs<O...>, variables<V...>> {
    static_assert(!Scope.empty() || error::empty_scope<Scope>::value,
                  "subgraph<>: a model file needs a scope to be imported under");
    static constexpr auto scope_name = Scope;
    static constexpr bool is_clone = false;
    using declared_inputs = typed::inputs<I...>;
    using declared_outputs = typed::outputs<O...>;
    using declared_variables = typed::variables<V...>;
    using lift = detail::rebase_fn<fixed_string<1>{}, Scope>;
    using inputs = typename declared_inputs::template renamed<lift>;
    using outputs = typename declared_outputs::template renamed<lift>;
    using variables = typename declared_variables::template renamed<lift>;
    using leaves = typed::leaves<leaf<Scope, subgraph>>;
    using wires = typed::wires<>;

private:
    static constexpr std::array<std::string_view, sizeof...(I) + sizeof...(O)> port_names{I::name.view()..., O::name.view()...};
    static constexpr std::size_t dup_port = detail::first_duplicate(port_names);
    static_assert(dup_port == detail::npos ||
                      error::duplicate_name_in_subgraph<Scope, detail::name_at<dup_port, I..., O...>()>::value,
                  "subgraph<>: two ports have the same name");
    static constexpr std::size_t dup_var = detail::first_duplicate(detail::names_of<declared_variables>::value);
    static_assert(dup_var == detail::npos ||
                      error::duplicate_name_in_subgraph<Scope, detail::name_at<dup_var, V...>()>::value,
                  "subgraph<>: two variables have the same name");
};

/// A composition renamed by R (scope<> and clone<>).
template <class G, class R, fixed_string Scope>
struct renamed_graph {
    static constexpr auto scope_name = Scope;
    using inputs = typename G::inputs::template renamed<R>;
    using outputs = typename G::outputs::template renamed<R>;
    using variables = typename G::variables::template renamed<R>;
    using leaves = typename G::leaves::template renamed<R>;
    using wires = typename G::wires::template renamed<R>;
};

/// G nested under `Outer`: every name gets the prefix "Outer/".
template <fixed_string Outer, class G>
struct scope : renamed_graph<G, detail::rebase_fn<fixed_string<1>{}, Outer>, join<Outer, G::scope_name>> {
    static_assert(!Outer.empty() || error::empty_scope<Outer>::value, "scope<\"name\", G>: the scope name is empty");
    static constexpr bool is_clone = false;
};

/// A copy of G under the scope `Copy`: G's own scope (or, when G has none, the root) becomes `Copy`
/// in every port, variable and tensor name. At run time its variables are new ones, initialised
/// from G's values.
template <class G, fixed_string Copy>
struct clone : renamed_graph<G, detail::rebase_fn<G::scope_name, Copy>, Copy> {
    static_assert(!Copy.empty() || error::empty_scope<Copy>::value, "clone<G, \"copy\">: the new scope is empty");
    static_assert(Copy.view() != G::scope_name.view() || error::clone_into_its_own_scope<Copy>::value,
                  "clone<G, \"copy\">: the copy's scope is G's own scope; pick a new one");
    static constexpr bool is_clone = true;
    static constexpr auto cloned_from = G::scope_name;
};

// ---------------------------------------------------------------------------------------------
// connect
// ---------------------------------------------------------------------------------------------

namespace detail {

template <class G>
concept cloned = G::is_clone;

template <class... L>
constexpr std::array<std::string_view, sizeof...(L)> names_of_scopes(leaves<L...>) {
    return {L::scope.view()...};
}

/// A's and B's leaves share no scope; the first overlap otherwise.
template <class A, class B>
struct check_scopes {
    static constexpr auto a = names_of_scopes(typename A::leaves{});
    static constexpr auto b = names_of_scopes(typename B::leaves{});
    static constexpr std::pair<std::size_t, std::size_t> hit = [] {
        for (std::size_t i = 0; i < a.size(); ++i) {
            for (std::size_t j = 0; j < b.size(); ++j) {
                if (overlap(a[i], b[j])) return std::pair<std::size_t, std::size_t>{i, j};
            }
        }
        return std::pair<std::size_t, std::size_t>{npos, npos};
    }();
    static constexpr bool ok = hit.first == npos;
    static constexpr std::size_t i = ok ? 0 : hit.first, j = ok ? 0 : hit.second;
};

}  // namespace detail

template <class A, class B, class Wire>
struct resolve_wire {
    static_assert(sizeof(Wire) == 0, "connect<A, B, ...>: the arguments after A and B are wire<\"out\", \"in\"> or expose<\"out\"...>");
};

template <class A, class B, fixed_string From, fixed_string To>
struct resolve_wire<A, B, wire<From, To>> {
    using outs = typename A::outputs;
    using ins = typename B::inputs;
    static constexpr auto s = detail::lookup(detail::names_of<outs>::value, From.view());
    static constexpr auto d = detail::lookup(detail::names_of<ins>::value, To.view());
    static_assert(s.count > 0 || error::no_output_port_named<From, A::scope_name>::value,
                  "connect<A, B, wire<from, to>>: a wire's source is not an output port of A (the first subgraph)");
    static_assert(s.count < 2 || error::several_ports_end_in<From>::value,
                  "connect<A, B, wire<from, to>>: several outputs of A end in the source's name; use its full name");
    static_assert(d.count > 0 || error::no_input_port_named<To, B::scope_name>::value,
                  "connect<A, B, wire<from, to>>: a wire's target is not an input port of B (the second subgraph)");
    static_assert(d.count < 2 || error::several_ports_end_in<To>::value,
                  "connect<A, B, wire<from, to>>: several inputs of B end in the target's name; use its full name");
    using source = typename detail::pick<outs, s.index, From>::type;
    using target = typename detail::pick<ins, d.index, To>::type;
    static constexpr bool found = s.index != detail::npos && d.index != detail::npos;
    static_assert(!found || std::is_same_v<typename source::value_type, typename target::value_type> ||
                      error::wire_dtype_mismatch<source::name, typename source::value_type, target::name,
                                                 typename target::value_type>::value,
                  "connect<A, B, wire<from, to>>: the wired ports have different dtypes");
    static_assert(!found || compatible_shapes_v<typename source::shape_type, typename target::shape_type> ||
                      error::wire_shape_mismatch<source::name, typename source::shape_type, target::name,
                                                 typename target::shape_type>::value,
                  "connect<A, B, wire<from, to>>: the wired ports' static shapes differ (rank, or a known dimension)");
    static constexpr std::size_t target_index = d.index;
    using type = bound_wire<source, target>;
};

namespace detail {

template <class... Items>
struct split_items {
    using wires = typed::wires<>;
    using exposed = void;
};
template <class W, class... Rest>
struct split_items<W, Rest...> {
    using wires = concat_t<typed::wires<W>, typename split_items<Rest...>::wires>;
    using exposed = typename split_items<Rest...>::exposed;
};
template <fixed_string... N, class... Rest>
struct split_items<expose<N...>, Rest...> {
    using wires = typename split_items<Rest...>::wires;
    using exposed = expose<N...>;
};

template <class Outs, class Exposed>
struct exposed_outputs {
    using type = Outs;
};
template <class Outs, fixed_string... N>
struct exposed_outputs<Outs, expose<N...>> {
    template <fixed_string Name>
    struct one {
        static constexpr auto r = lookup(names_of<Outs>::value, Name.view());
        static_assert(r.count > 0 || error::no_output_port_named<Name>::value,
                      "connect<..., expose<names...>>: an exposed name is not an output of either part");
        static_assert(r.count < 2 || error::several_ports_end_in<Name>::value,
                      "connect<..., expose<names...>>: several outputs end in an exposed name; use its full name");
        using type = typename pick<Outs, r.index, Name>::type;
    };
    using type = outputs<typename one<N>::type...>;
};

template <class A, class B, class Wires>
struct connect_core;
template <class A, class B, class... W>
struct connect_core<A, B, wires<W...>> {
    using resolved = wires<typename resolve_wire<A, B, W>::type...>;
    static constexpr std::array<std::size_t, sizeof...(W)> targets{resolve_wire<A, B, W>::target_index...};
    static constexpr std::size_t twice = [] {
        for (std::size_t i = 0; i < targets.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (targets[i] != npos && targets[i] == targets[j]) return i;
            }
        }
        return npos;
    }();
    static constexpr auto twice_name = [] {
        if constexpr (twice == npos) {
            return fixed_string<1>{};
        } else {
            return resolved::template at<twice>::target::name;
        }
    }();
    static_assert(twice == npos || error::input_wired_twice<twice_name>::value,
                  "connect<A, B, wire...>: an input of B is wired twice");
    static constexpr index_set<B::inputs::size> kept = [] {
        index_set<B::inputs::size> k;
        for (std::size_t i = 0; i < B::inputs::size; ++i) {
            if (std::find(targets.begin(), targets.end(), i) == targets.end()) k.index[k.count++] = i;
        }
        return k;
    }();
    using b_inputs = typename select_impl<typename B::inputs, kept, std::make_index_sequence<kept.count>>::type;
};

template <class A, class B>
struct scope_check {
    using c = check_scopes<A, B>;
    static constexpr auto sa = A::leaves::template at<c::i>::scope;
    static constexpr auto sb = B::leaves::template at<c::j>::scope;
    static constexpr bool b_clone = cloned<B>, a_clone = cloned<A>;
    static_assert(c::ok || !b_clone || error::clone_into_a_scope_that_exists<sb, sa>::value,
                  "connect<A, B>: a clone<G, \"copy\"> lands in a scope that already exists in the composition (the note shows both scopes)");
    static_assert(c::ok || b_clone || !a_clone || error::clone_into_a_scope_that_exists<sa, sb>::value,
                  "connect<A, B>: a clone<G, \"copy\"> lands in a scope that already exists in the composition (the note shows both scopes)");
    static_assert(c::ok || a_clone || b_clone || error::overlapping_variable_scopes<sa, sb>::value,
                  "connect<A, B>: A and B have overlapping variable scopes (the note shows both); put one under scope<\"name\", G> or clone<G, \"name\">");
    static constexpr bool ok = c::ok;
};

}  // namespace detail

/// A and B as one subgraph: the wires feed B's inputs from A's outputs.
template <class A, class B, class... Items>
struct connect {
private:
    static_assert(sizeof(detail::scope_check<A, B>) > 0);  // instantiates the scope checks
    using items = detail::split_items<Items...>;
    using core = detail::connect_core<A, B, typename items::wires>;

public:
    static constexpr auto scope_name = fixed_string<1>{};
    static constexpr bool is_clone = false;
    using inputs = detail::concat_t<typename A::inputs, typename core::b_inputs>;
    using outputs = typename detail::exposed_outputs<detail::concat_t<typename A::outputs, typename B::outputs>,
                                                     typename items::exposed>::type;
    using variables = detail::concat_t<typename A::variables, typename B::variables>;
    using leaves = detail::concat_t<typename A::leaves, typename B::leaves>;
    using wires = detail::concat_t<detail::concat_t<typename A::wires, typename B::wires>, typename core::resolved>;
};

/// True for the types built from subgraph/connect/clone/scope (and the layers of typed/layers.hpp).
template <class G>
concept graph_type = requires {
    G::scope_name;
    typename G::inputs;
    typename G::outputs;
    typename G::variables;
    typename G::leaves;
    typename G::wires;
};

}  // namespace graft::typed
