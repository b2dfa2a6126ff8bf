/* copy_cost_exit: a program that only exits, linked statically: what exec'ing a small helper
 * costs, for copy_cost_bench. */
int main(void)
{
    return 0;
}
