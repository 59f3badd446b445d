#include "dpem/random/samplers.h"
