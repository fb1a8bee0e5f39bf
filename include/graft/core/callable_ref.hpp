// graft/core/callable_ref.hpp — a non-owning reference to a callable, for parameters called
// before the function returns (graft::run_tasks, the kernels' parallel loops).
//
//   void each(int n, graft::callable_ref<void(int)> f) { for (int i = 0; i < n; ++i) f(i); }
//   each(3, [&](int i) { sum += i; });
//
// A std::function parameter copies a lambda that captures more than two pointers onto the heap on
// every call (libstdc++ keeps 16 bytes inline): three such copies per MLP forward at batch 1. A
// callable_ref is two pointers and never allocates; the callable must outlive the call, which a
// temporary lambda argument does.
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace graft {

template <class Sig>
class callable_ref;

template <class R, class... Args>
class callable_ref<R(Args...)> {
public:
    /// Refers to `f` (not copied: it must outlive every call through this reference). A function
    /// binds through a pointer to it that outlives the calls, not by its name.
    template <class F>
        requires(!std::is_same_v<std::remove_cvref_t<F>, callable_ref> && !std::is_function_v<std::remove_reference_t<F>> &&
                 std::is_invocable_r_v<R, F&, Args...>)
    callable_ref(F&& f) noexcept  // NOLINT(google-explicit-constructor): binds lambdas at call sites
        : obj_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
          call_([](void* o, Args... a) -> R {
              return std::invoke(*static_cast<std::remove_reference_t<F>*>(o), std::forward<Args>(a)...);
          }) {}

    R operator()(Args... a) const { return call_(obj_, std::forward<Args>(a)...); }

private:
    void* obj_;
    R (*call_)(void*, Args...);
};

}  // namespace graft
