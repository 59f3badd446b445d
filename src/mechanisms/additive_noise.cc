#include "dpem/mechanisms/additive_noise.h"
