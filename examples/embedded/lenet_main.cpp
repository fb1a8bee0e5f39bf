// lenet_main — the embedded LeNet of example 06 as a plain program: no graft, no protobuf, no
// exceptions, no RTTI, no heap in the network. Built by the example_06_embedded_build test with
//   c++ -std=c++17 -Os -fno-exceptions -fno-rtti -s -I<dir> lenet_main.cpp -o lenet_main
// and run as `lenet_main <dir>`, where example_06_embedded_lenet wrote lenet_embedded.hpp, the
// held-out images (raw float32 [N,28,28,1]), their labels (one byte each) and graft's own score.
// Exit status 0 when the embedded classifier scores what graft's runtime scored (within 2 images:
// summation order may flip a near tie).
#include "lenet_embedded.hpp"

#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
    char path[4096];
    const char* dir = argc > 1 ? argv[1] : ".";
    std::snprintf(path, sizeof path, "%s/eval_images.f32", dir);
    std::FILE* images = std::fopen(path, "rb");
    std::snprintf(path, sizeof path, "%s/eval_labels.u8", dir);
    std::FILE* labels = std::fopen(path, "rb");
    std::snprintf(path, sizeof path, "%s/graft_correct.txt", dir);
    std::FILE* graft = std::fopen(path, "r");
    if (!images || !labels || !graft) {
        std::fprintf(stderr, "lenet_main: cannot open the files of example_06_embedded_lenet in '%s'\n", dir);
        return 2;
    }
    long graft_correct = 0, graft_total = 0;
    if (std::fscanf(graft, "%ld %ld", &graft_correct, &graft_total) != 2) return 2;
    static float in[lenet::net::input_size];
    float probs[lenet::net::output_size];
    long n = 0, correct = 0;
    unsigned char label = 0;
    while (std::fread(in, sizeof in, 1, images) == 1 && std::fread(&label, 1, 1, labels) == 1) {
        lenet::net::forward(in, probs);
        int best = 0;
        for (int j = 1; j < lenet::net::output_size; ++j) best = probs[j] > probs[best] ? j : best;
        correct += best == label;
        ++n;
    }
    std::printf("embedded lenet: %ld/%ld = %.4f (graft runtime: %ld/%ld); weights %ld bytes, arena %ld bytes\n", correct, n,
                n ? static_cast<double>(correct) / static_cast<double>(n) : 0.0, graft_correct, graft_total,
                lenet::net::weight_floats * 4, lenet::net::arena_floats * 4);
    long d = correct - graft_correct;
    return n == graft_total && d <= 2 && d >= -2 ? 0 : 1;
}
