"""textwrap and string methods"""
import textwrap

para = ("Agents write a lot of small programs. Most of them read some input, transform it, "
        "and print a result. A validator must not get in their way.")
for line in textwrap.wrap(para, width=40):
    print(f"|{line:<40}|")
print(textwrap.indent("a\nb", "> "))
print(textwrap.dedent("""
    x = 1
      y = 2
""").strip())
print("title case".title(), "  pad ".strip().center(11, "*"))
