// PLACEHOLDER until the RandWire builder lands (being written now); must not be committed as-is.
#include "src/error.h"
#include "src/zoo/zoo.h"
namespace iostune {
Graph build_randwire(int, unsigned) { throw Error("randwire: not built yet"); }
}  // namespace iostune
