#include "dpem/data/io.h"
