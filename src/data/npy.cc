#include "dpem/data/npy.h"
