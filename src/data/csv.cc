#include "dpem/data/csv.h"
