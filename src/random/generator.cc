#include "dpem/random/generator.h"
