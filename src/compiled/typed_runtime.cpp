// The runtime part of graft/typed/bind.hpp (graft::load and the bound graph's session, training
// and saving), compiled once here so that translation units using typed graphs stay light.
#define GRAFT_COMPILING_TYPED
#include "graft/typed/bind.hpp"
