#include "dpem/mechanisms/simplex.h"
