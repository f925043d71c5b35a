"""The code the lecture notebooks call, one module per chapter topic, each a set of plain tested functions.

* :mod:`~sdpa_course.lessons.scaling`: chapter 4, why scores are divided by sqrt(d_k) (variance, saturation);
* :mod:`~sdpa_course.lessons.two_heads`: chapter 6, a task one head cannot solve and two heads can;
* :mod:`~sdpa_course.lessons.cost`: chapter 7, time and memory against length, the H200 reference (and the
  KV cache against the weights, chapter 6);
* :mod:`~sdpa_course.lessons.masking`: chapter 8, the seed's 苹果 and 我 爱 北京 examples;
* :mod:`~sdpa_course.lessons.applications`: chapter 9, toy translation, generation and retrieval;
* :mod:`~sdpa_course.lessons.seed_code`: chapter 10, the seed document's own demo code, kept as written;
* :mod:`~sdpa_course.lessons.positions`: chapter 13, RoPE against added position vectors, sliding windows' reach;
* :mod:`~sdpa_course.lessons.decoding`: chapter 13, the KV cache of real models, prefill against decode, MLA, HBM traffic;
* :mod:`~sdpa_course.lessons.precision`: chapter 13, float16 and bfloat16, and attention weights in them as scores grow.
"""
