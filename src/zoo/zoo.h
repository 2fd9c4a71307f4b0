// The built-in model zoo: CNNs whose layer shapes equal the torchvision / timm / paper
// architectures, built with batch norm already folded into the convolutions.
#pragma once

#include <string>
#include <vector>

#include "src/graph.h"

namespace iostune {

// Canonical names, in display order.
std::vector<std::string> zoo_model_names();

// Builds a zoo model at the given batch size, without weights.
// Throws iostune::Error naming the valid models for an unknown name.
Graph build_zoo_model(const std::string& name, int batch = 1);

bool is_zoo_model(const std::string& name);

// One builder per model (src/zoo/<model>.cpp).
Graph build_inception_v3(int batch);
Graph build_googlenet(int batch);
Graph build_squeezenet1_1(int batch);
Graph build_resnet50(int batch);
Graph build_nasnet_a_large(int batch);
// RandWire (IOS paper's large regime), Watts-Strogatz graphs from `seed`.
Graph build_randwire(int batch, unsigned seed);

}  // namespace iostune
