// `graft idx2npy IN OUT.npy [--features]` — an IDX file (MNIST's format, gzip or plain) as .npy:
// images as uint8 [N,H,W], or with --features as float32 [N,H*W] scaled to [0,1] (what TF's MNIST
// tutorials feed); labels as uint8 [N].
#include <iostream>

#include "commands.hpp"
#include "graft/core.hpp"
#include "graft/formats/idx.hpp"

namespace graft_cmd_idx {  // named, not anonymous: the CLI builds as one unity translation unit

void add_idx(CLI::App& app) {
    static std::string in, out;
    static bool features = false;
    auto* cmd = app.add_subcommand("idx2npy", "Convert an IDX file (MNIST images/labels, .gz or plain) to .npy");
    cmd->add_option("input", in, "IDX file, e.g. t10k-images-idx3-ubyte.gz")->required();
    cmd->add_option("output", out, "Output .npy file")->required();
    cmd->add_flag("--features", features, "Images as float32 [N,H*W] divided by 255");
    cmd->callback([] {
        graft::tensor t = graft::data::read_idx(in);
        if (features) t = graft::data::mnist_images_as_features(t);
        graft::write_npy(out, t);
        std::cout << in << " -> " << out << " " << t.describe() << "\n";
    });
}

graft::cli::registrar reg(45, &add_idx);

}  // namespace
