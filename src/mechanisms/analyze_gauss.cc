#include "dpem/mechanisms/analyze_gauss.h"
