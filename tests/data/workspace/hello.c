#include "hello.h"

int add(int a, int b) { return a + b; }

int main(void) {
    int total = add(1, 2);
    return totl;
}
