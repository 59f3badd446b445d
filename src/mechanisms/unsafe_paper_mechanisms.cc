#include "dpem/mechanisms/unsafe_paper_mechanisms.h"
