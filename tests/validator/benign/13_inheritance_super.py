"""inheritance, super().__init__(), method overriding, isinstance"""
class Animal:
    def __init__(self, name: str, sound: str = "...") -> None:
        self.name = name
        self.sound = sound

    def speak(self) -> str:
        return f"{self.name} says {self.sound}"


class Dog(Animal):
    def __init__(self, name: str, tricks=None) -> None:
        super().__init__(name, "woof")
        self.tricks = list(tricks or [])

    def speak(self) -> str:
        return super().speak() + "!" * len(self.tricks)


class Puppy(Dog):
    pass


animals = [Animal("cat"), Dog("rex", ["sit", "roll"]), Puppy("bit")]
for a in animals:
    print(a.speak(), isinstance(a, Dog), type(a).__name__)
print(issubclass(Puppy, Animal), [type(a).__name__ for a in animals if isinstance(a, Dog)])
