// The translation unit that compiles graft_test_pch's precompiled header (tests/CMakeLists.txt);
// nothing links it.
